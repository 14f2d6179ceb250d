//! Per-Service node sets through `vcd-ccm run` (contract 0.4.0,
//! `vcd-ccm.io/node-selector`): Services naming one selector share an IP
//! set of the Nodes it picks, a Node labelled into it costs one write, a
//! selector no Node meets any more keeps the members with a Warning, and
//! the set goes once no pool uses it.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Node, Service};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;
use vcdsim::Sim;

use super::{CONVERGE, START, leading};
use crate::support::poll::wait_until;
use crate::support::run::{LiveService, World};

const SELECTOR: &str = "vcd-ccm.io/node-selector";
const FIREWALL_GROUPS: &str = "/cloudapi/1.0.0/firewallGroups";

async fn label(world: &World, node: &str, labels: serde_json::Value) {
    Api::<Node>::all(world.client.clone())
        .patch(
            node,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": labels}})),
        )
        .await
        .expect("the Node is labelled");
}

/// The IP set each of the Service's pools names, with its addresses.
fn sets_of(vcd: &Sim, service: &LiveService) -> Vec<(String, BTreeSet<String>)> {
    let tagged = format!(" uid={}", service.uid);
    vcd.with_world(|w| {
        w.pools
            .iter()
            .filter(|p| p.description.as_deref().unwrap_or("").contains(&tagged))
            .filter_map(|p| {
                let id = &p.member_group_ref.as_ref()?.id;
                let set = w
                    .firewall_groups
                    .iter()
                    .find(|s| s.body.id.as_deref() == Some(id))?;
                let ips = set.body.ip_addresses.clone().unwrap_or_default();
                Some((set.body.name.clone(), ips.into_iter().collect()))
            })
            .collect()
    })
}

/// The one set all of the Service's pools name, if they name one.
fn set_of(vcd: &Sim, service: &LiveService) -> Result<(String, BTreeSet<String>), String> {
    let sets = sets_of(vcd, service);
    match sets.as_slice() {
        [one] => Ok(one.clone()),
        other => Err(format!("{}'s pools name {other:?}", service.name)),
    }
}

fn ips(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn set_exists(vcd: &Sim, name: &str) -> bool {
    vcd.with_world(|w| w.firewall_groups.iter().any(|g| g.body.name == name))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_naming_one_selector_share_a_set_of_the_nodes_it_picks() {
    let world = World::start().await;
    world.add_nodes().await;
    label(&world, "worker-0", json!({"role": "ingress"})).await;
    let ccm = world.spawn("node-sets", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let a = world
        .create_annotated_service("a", &[80], json!({SELECTOR: "role=ingress"}))
        .await;
    // The same selector in the set-based syntax.
    let b = world
        .create_annotated_service("b", &[81], json!({SELECTOR: "role in (ingress)"}))
        .await;
    let c = world.create_service("c", &[82]).await;
    let ((shared, cluster), _) = wait_until("the sets", START + CONVERGE, || async {
        let (shared, members) = set_of(&world.vcd, &a)?;
        let (of_b, _) = set_of(&world.vcd, &b)?;
        let (cluster, all) = set_of(&world.vcd, &c)?;
        match (
            members == ips(&["10.0.0.11"]),
            of_b == shared,
            all == ips(&["10.0.0.11", "10.0.0.12"]),
        ) {
            (true, true, true) => Ok((shared, cluster)),
            state => Err(format!("{state:?}")),
        }
    })
    .await;
    assert!(shared.starts_with("ingress-nodes-select-"), "{shared}");
    assert_ne!(shared, cluster);

    // A Node labelled into the selector: one write of the shared set,
    // whatever the number of Services naming it.
    world.vcd.reset_log();
    label(&world, "worker-1", json!({"role": "ingress"})).await;
    for service in ["a", "b", "c"] {
        wait_until("the node update", START, || {
            world.latest_event(service, "UpdatedLoadBalancer")
        })
        .await;
    }
    let (_, members) = set_of(&world.vcd, &a).expect("a's set");
    assert_eq!(members, ips(&["10.0.0.11", "10.0.0.12"]));
    let writes: Vec<String> = world
        .vcd
        .requests()
        .iter()
        .filter(|r| r.method != "GET" && r.template.starts_with(FIREWALL_GROUPS))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    println!(
        "a Node's labels changing: {} IP set write for 2 Services sharing a selector",
        writes.len()
    );

    // No Node meets the selector any more: the last members stay, with a
    // Warning.
    label(&world, "worker-0", json!({"role": null})).await;
    wait_until("worker-0 out of the set", START, || async {
        match set_of(&world.vcd, &a)? {
            (_, members) if members == ips(&["10.0.0.12"]) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    label(&world, "worker-1", json!({"role": null})).await;
    let (warning, _) = wait_until("the Warning", START, || {
        world.latest_event("a", "LoadBalancerPolicyWarning")
    })
    .await;
    assert!(warning.contains("matches no eligible Node"), "{warning}");
    assert!(warning.contains("role in (ingress)"), "{warning}");
    assert_eq!(
        set_of(&world.vcd, &b).expect("b's set"),
        (shared.clone(), ips(&["10.0.0.12"]))
    );

    // a moves off the selector; the set stays while b uses it, and goes
    // with b.
    let services: Api<Service> = Api::namespaced(world.client.clone(), "default");
    services
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {SELECTOR: null}}})),
        )
        .await
        .expect("a's selector is removed");
    wait_until("a on the cluster's set", START, || async {
        match set_of(&world.vcd, &a)? {
            (name, _) if name == cluster => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert!(set_exists(&world.vcd, &shared), "b still uses {shared}");
    services
        .delete("b", &DeleteParams::default())
        .await
        .expect("b is deleted");
    wait_until("the shared set gone with b", START, || async {
        match set_exists(&world.vcd, &shared) {
            false => Ok(()),
            true => Err(format!("{shared} is still there")),
        }
    })
    .await;
    assert!(set_exists(&world.vcd, &cluster));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_selector_is_refused_naming_the_annotation_and_writes_nothing() {
    let world = World::start().await;
    world.add_nodes().await;
    let ccm = world.spawn("bad-selector", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    world.vcd.reset_log();
    world
        .create_annotated_service("web", &[80], json!({SELECTOR: "role in ingress"}))
        .await;
    let (message, _) = wait_until("the refusal", START, || {
        world.latest_event("web", "SyncLoadBalancerFailed")
    })
    .await;
    assert!(message.contains(SELECTOR), "{message}");
    assert!(message.contains("parentheses"), "{message}");
    let writes = crate::support::run::gateway::vcd_writes(&world.vcd);
    assert!(writes.is_empty(), "{writes:#?}");
}

/// Before API 37.1 pools list their members: the selector narrows the
/// list, and when no Node meets it the pool keeps the members it lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_api_37_1_the_selector_narrows_each_pools_member_list() {
    let yaml = format!(
        "apiVersions: [\"37.0\"]\n{}",
        vcdsim::scenario::DEFAULT_SCENARIO
    );
    let world =
        World::start_on(vcdsim::Scenario::from_yaml(&yaml).expect("the scenario parses")).await;
    world.add_nodes().await;
    label(&world, "worker-0", json!({"role": "ingress"})).await;
    let ccm = world.spawn("listed", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let web = world
        .create_annotated_service("web", &[80], json!({SELECTOR: "role=ingress"}))
        .await;
    let tagged = format!(" uid={}", web.uid);
    let listed = || {
        world.vcd.with_world(|w| {
            w.pools
                .iter()
                .filter(|p| p.description.as_deref().unwrap_or("").contains(&tagged))
                .map(|p| {
                    assert!(p.member_group_ref.is_none(), "{} names a set", p.name);
                    w.pool_member_ips(p).into_iter().collect::<BTreeSet<_>>()
                })
                .collect::<Vec<_>>()
        })
    };
    wait_until("worker-0 listed", START + CONVERGE, || async {
        match listed() {
            pools if pools == vec![ips(&["10.0.0.11"])] => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    label(&world, "worker-0", json!({"role": null})).await;
    let (warning, _) = wait_until("the Warning", START, || {
        world.latest_event("web", "LoadBalancerPolicyWarning")
    })
    .await;
    assert!(warning.contains("matches no eligible Node"), "{warning}");
    assert_eq!(listed(), vec![ips(&["10.0.0.11"])]);
}

/// A Service with a selector deleted while vcd-ccm was down: the start
/// sweep removes its objects, then its selector's set, which no pool
/// carries any more; the cluster's set stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_sweep_deletes_a_selector_set_no_pool_uses() {
    let world = World::start().await;
    world.add_nodes().await;
    label(&world, "worker-0", json!({"role": "ingress"})).await;
    // Without leader election the second process need not wait for the
    // killed one's Lease to expire.
    let mut ccm = world.spawn("before", &["--leader-elect=false"]);
    wait_until("the process to be ready", START, || ccm.ready()).await;
    let web = world
        .create_annotated_service("web", &[80], json!({SELECTOR: "role=ingress"}))
        .await;
    world.create_service("other", &[81]).await;
    let ((shared, _), _) = wait_until("web's set", START + CONVERGE, || async {
        set_of(&world.vcd, &web)
    })
    .await;
    wait_until("other's address", START, || world.external_ip("other")).await;
    ccm.kill();
    let services: Api<Service> = Api::namespaced(world.client.clone(), "default");
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("the finalizer is removed");
    services
        .delete("web", &DeleteParams::default())
        .await
        .expect("web is deleted");
    assert!(set_exists(&world.vcd, &shared));
    let again = world.spawn("after", &["--leader-elect=false"]);
    wait_until("the process to be ready", START, || again.ready()).await;
    wait_until("the selector's set swept", START, || async {
        match set_exists(&world.vcd, &shared) {
            false => Ok(()),
            true => Err(format!("{shared} is still there")),
        }
    })
    .await;
    let sets: Vec<String> = world.vcd.with_world(|w| {
        w.firewall_groups
            .iter()
            .map(|g| g.body.name.clone())
            .collect()
    });
    assert!(
        sets.iter().any(|s| s.starts_with("ingress-nodes-cluster-")),
        "{sets:?}"
    );
}

//! Pool members through the binary: from API 37.1 every pool takes its
//! members from an IP set (the cluster's, or a `Local` Service's own), so a
//! Node joining is one VCD write whatever the number of Services; before
//! 37.1 pools list their members, and more than 100 Nodes is refused with
//! the limit and the version that lifts it; a role VCD refuses IP sets to
//! keeps member lists; a VCD upgraded to 37.1 moves each pool to the group
//! in place, once.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::PostParams;
use serde_json::json;
use vcdsim::{FaultAction, FaultRule, Scenario, Sim};

use super::{CONVERGE, START, converged};
use crate::support::objects::ServiceEdits;
use crate::support::poll::{holds_across, wait_until};
use crate::support::run::gateway::drift_checks;
use crate::support::run::{LiveService, World};

/// With the Local Service, nine: the default engine group holds ten.
const SERVICES: usize = 8;
const FIREWALL_GROUPS: &str = "/cloudapi/1.0.0/firewallGroups";

/// vcdsim's default world, advertising `versions`.
fn scenario(versions: &[&str]) -> Scenario {
    let yaml = format!(
        "apiVersions: [{}]\n{}",
        versions.join(", "),
        vcdsim::scenario::DEFAULT_SCENARIO
    );
    Scenario::from_yaml(&yaml).expect("the scenario parses")
}

/// Ready, initialised Nodes `worker-<i>` at `10.0.<i / 200>.<11 + i % 200>`.
async fn add_ready_nodes(world: &World, range: std::ops::Range<usize>) {
    let nodes: Api<Node> = Api::all(world.client.clone());
    for i in range {
        let (name, ip) = (
            format!("worker-{i}"),
            format!("10.0.{}.{}", i / 200, 11 + i % 200),
        );
        let node = serde_json::from_value(json!({
            "metadata": {"name": name},
            "status": {
                "addresses": [{"type": "InternalIP", "address": ip}],
                "conditions": [{"type": "Ready", "status": "True"}]
            }
        }))
        .expect("a Node");
        nodes
            .create(&PostParams::default(), &node)
            .await
            .expect("the Node is created");
    }
}

/// Per pool of the cluster: the IP set it names (`None`: a member list)
/// and the addresses it sends to.
fn pools(vcd: &Sim) -> Vec<(String, Option<String>, BTreeSet<String>)> {
    vcd.with_world(|w| {
        w.pools
            .iter()
            .map(|p| {
                let group = p.member_group_ref.as_ref().and_then(|g| {
                    let set = w
                        .firewall_groups
                        .iter()
                        .find(|s| s.body.id.as_deref() == Some(&g.id))?;
                    Some(set.body.name.clone())
                });
                (
                    p.name.clone(),
                    group,
                    w.pool_member_ips(p).into_iter().collect(),
                )
            })
            .collect()
    })
}

/// What was written to VCD, as `METHOD route`.
fn writes(vcd: &Sim) -> Vec<String> {
    vcd.requests()
        .iter()
        .filter(|e| e.method != "GET")
        .filter(|e| !e.template.contains("sessions") && !e.template.contains("/oauth/"))
        .map(|e| format!("{} {}", e.method, e.template))
        .collect()
}

/// A drift check every half second, so quiet can be held across syncs that
/// ran ([`drift_checks`]).
const DRIFT: &str = "--drift-repair-period=500ms";

/// Waits for `count` writes, then checks no more come over three drift
/// checks (the Services the first two queued have synced by the third).
async fn settled_at(vcd: &Sim, count: usize) {
    wait_until("the writes", CONVERGE, || async {
        match writes(vcd).len() {
            n if n >= count => Ok(()),
            n => Err(format!("{n} writes so far: {:?}", writes(vcd))),
        }
    })
    .await;
    holds_across(
        "no more writes",
        3,
        || drift_checks(vcd),
        || {
            let made = writes(vcd);
            assert_eq!(made.len(), count, "more writes than {count}: {made:?}");
            true
        },
    )
    .await;
}

fn member_sets(vcd: &Sim) -> BTreeSet<String> {
    vcd.with_world(|w| {
        w.firewall_groups
            .iter()
            .map(|g| g.body.name.clone())
            .filter(|n| n.starts_with("ingress-nodes-"))
            .collect()
    })
}

async fn create_services(world: &World, count: usize) -> Vec<LiveService> {
    let mut services = Vec::new();
    for i in 0..count {
        services.push(world.create_service(&format!("web-{i}"), &[80]).await);
    }
    converged(world, &services).await;
    services
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_join_is_one_write_whatever_the_number_of_services() {
    // At API 38.1 a Local Service's pools use a set of its own (from 39.0
    // they probe the Nodes and use the cluster's).
    let world = World::start_on(scenario(&["37.2", "38.0", "38.1"])).await;
    add_ready_nodes(&world, 0..2).await;
    // No drift checks here: one that runs while the Node joins may write
    // the cluster's set a second time (a race noted for the member-set code).
    let ccm = world.spawn("ccm", &["--leader-elect=false"]);
    wait_until("the process to be ready", START, || ccm.ready()).await;
    let mut services = create_services(&world, SERVICES).await;
    let local = world.create_service("local", &[81]).await;
    world
        .patch_service(
            "default",
            "local",
            json!({"spec": {"externalTrafficPolicy": "Local"}}),
        )
        .await;
    services.push(local);
    converged(&world, &services).await;

    let (groups, _) = wait_until("the Local Service's own set", CONVERGE, || async {
        let groups: BTreeSet<Option<String>> = pools(&world.vcd).into_iter().map(|p| p.1).collect();
        match groups.len() {
            2 => Ok(groups),
            _ => Err(format!("{groups:?}")),
        }
    })
    .await;
    let cluster_set = groups
        .iter()
        .flatten()
        .find(|n| n.starts_with("ingress-nodes-cluster-"))
        .cloned()
        .expect("the cluster's IP set");
    assert_eq!(
        groups.len(),
        2,
        "the cluster's set and the Local Service's: {groups:?}"
    );
    assert!(!groups.contains(&None), "no pool lists members: {groups:?}");

    world.vcd.reset_log();
    let node_syncs = || ccm.metric("service_controller_nodesync_latency_seconds_count");
    let before = node_syncs().await.unwrap();
    add_ready_nodes(&world, 2..3).await;
    wait_until("every pool to reach the new Node", CONVERGE, || async {
        let missing = pools(&world.vcd)
            .into_iter()
            .filter(|(_, group, ips)| {
                group.as_ref() == Some(&cluster_set) && !ips.contains("10.0.0.13")
            })
            .count();
        match missing {
            0 => Ok(()),
            n => Err(format!("{n} pools without it")),
        }
    })
    .await;
    // The node sync the join caused has ended: whatever it wrote is written.
    wait_until("the join's node sync to end", CONVERGE, || async {
        let now = node_syncs().await?;
        (now > before)
            .then_some(())
            .ok_or_else(|| format!("{now} node syncs"))
    })
    .await;
    let made = writes(&world.vcd);
    println!(
        "a Node joining {} Services: {} VCD write(s): {made:?}",
        services.len(),
        made.len()
    );
    assert_eq!(
        made,
        vec![format!("PUT {FIREWALL_GROUPS}/{{id}}")],
        "the process's log:\n{}",
        ccm.stderr()
    );

    // The Local Service's set goes with it.
    world.delete_service("default", "local").await;
    wait_until(
        "the Local Service's set to be deleted",
        CONVERGE,
        || async {
            match member_sets(&world.vcd)
                .into_iter()
                .find(|n| n.contains("default.local"))
            {
                Some(set) => Err(format!("{set} is still there")),
                None => Ok(()),
            }
        },
    )
    .await;
    assert!(member_sets(&world.vcd).contains(&cluster_set));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_api_37_1_pools_list_members_and_more_than_100_nodes_is_refused() {
    let world = World::start_on(scenario(&["36.0", "37.0"])).await;
    add_ready_nodes(&world, 0..2).await;
    let ccm = world.spawn("ccm", &["--leader-elect=false", DRIFT]);
    wait_until("the process to be ready", START, || ccm.ready()).await;
    create_services(&world, 1).await;
    let listed = pools(&world.vcd);
    assert!(
        listed
            .iter()
            .all(|(_, group, ips)| group.is_none() && ips.len() == 2),
        "{listed:?}"
    );
    assert!(member_sets(&world.vcd).is_empty());

    // Nodes join one by one: the pool follows them up to 100, then the
    // 101st is refused with the limit and the version that lifts it, and
    // the pool is left as it is.
    add_ready_nodes(&world, 2..101).await;
    // The node sync reports it, or a drift check's sync when it runs first.
    let (message, _) = wait_until("a Warning naming the limit", CONVERGE, || async {
        match world
            .latest_event("web-0", "UpdateLoadBalancerFailed")
            .await
        {
            Ok(message) => Ok(message),
            Err(_) => world.latest_event("web-0", "SyncLoadBalancerFailed").await,
        }
    })
    .await;
    assert!(
        message.contains("101 Nodes")
            && message.contains("at most 100")
            && message.contains("37.1"),
        "{message}"
    );
    let refused = pools(&world.vcd);
    assert!(
        refused
            .iter()
            .all(|(_, group, ips)| group.is_none() && ips.len() <= 100),
        "{refused:?}"
    );
    holds_across(
        "the pool to be left alone",
        3,
        || drift_checks(&world.vcd),
        || pools(&world.vcd) == refused,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_role_vcd_refuses_ip_sets_keeps_member_lists() {
    let world = World::start().await;
    world.vcd.add_fault(FaultRule::new(
        Some("POST"),
        FIREWALL_GROUPS,
        FaultAction::Error {
            status: 403,
            minor_error_code: "ACCESS_TO_RESOURCE_IS_FORBIDDEN".into(),
            message: "Either you need some or all of the following rights [ORG_VDC_GATEWAY_CONFIGURE_FIREWALL] to perform operations [FIREWALL_GROUP_CREATE] for $id or the target entity is invalid".into(),
        },
    ));
    add_ready_nodes(&world, 0..2).await;
    let ccm = world.spawn("ccm", &["--leader-elect=false"]);
    wait_until("the process to be ready", START, || ccm.ready()).await;
    create_services(&world, 2).await;
    let listed = pools(&world.vcd);
    assert!(
        listed
            .iter()
            .all(|(_, group, ips)| group.is_none() && ips.len() == 2),
        "{listed:?}"
    );
    let log = ccm.stderr();
    assert!(
        log.contains("Organization vDC Gateway: Configure Firewall")
            && log.contains("pools keep listing their members"),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vcd_upgraded_to_37_1_moves_each_pool_to_the_group_once() {
    let world = World::start_on(scenario(&["37.0"])).await;
    add_ready_nodes(&world, 0..2).await;
    let first = world.spawn("first", &["--leader-elect=false"]);
    wait_until("the process to be ready", START, || first.ready()).await;
    let services = create_services(&world, 3).await;
    assert!(pools(&world.vcd).iter().all(|p| p.1.is_none()));
    drop(first);

    world
        .vcd
        .with_world(|w| w.site.versions.push("39.1".into()));
    world.vcd.reset_log();
    let second = world.spawn("second", &["--leader-elect=false", DRIFT]);
    wait_until("the process to be ready", START, || second.ready()).await;
    wait_until("every pool to name the cluster's set", CONVERGE, || async {
        let listed = pools(&world.vcd)
            .into_iter()
            .filter(|p| p.1.is_none())
            .count();
        match listed {
            0 => Ok(()),
            n => Err(format!("{n} pools still list members")),
        }
    })
    .await;
    converged(&world, &services).await;
    settled_at(&world.vcd, 1 + services.len()).await;
    let mut made = writes(&world.vcd);
    made.sort();
    let mut wanted = vec![format!("POST {FIREWALL_GROUPS}")];
    wanted.extend(
        (0..services.len()).map(|_| "PUT /cloudapi/1.0.0/loadBalancer/pools/{id}".to_string()),
    );
    wanted.sort();
    assert_eq!(made, wanted, "one set created, each pool written once");
    assert!(pools(&world.vcd).iter().all(|(_, _, ips)| ips.len() == 2));
}

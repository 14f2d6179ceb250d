//! The lifecycle controller's mass-deletion guard end to end: the real
//! controllers against kubesim and vcdsim (vApp `cluster1`: control-plane-0,
//! worker-0, worker-1). An empty VM inventory, or more than
//! `--max-node-deletion-fraction` of the Nodes gone at once, deletes nothing
//! and says so; a single Node whose VM is gone is deleted as before.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Event;
use kubesim::KubeSim;
use prometheus_client::encoding::text::encode;
use vcd_ccm::controllers::lifecycle::{DeletionFraction, HELD_REASON};
use vcd_ccm::instances::HostnameSource;
use vcdsim::Sim;

use crate::support::nodes::*;

const HELD_GAUGE: &str = "vcd_ccm_node_deletions_held";
const HELD_PASSES: &str = "vcd_ccm_node_deletion_held_passes_total";

/// The value of an unlabelled gauge or counter of the harness's registry.
fn metric(h: &Harness, name: &str) -> u64 {
    let mut text = String::new();
    encode(&mut text, &h.registry).expect("metrics encode");
    let prefix = format!("{name} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&prefix)?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

/// The names of the Nodes that have a `NodeDeletionHeld` Event.
fn held_events(h: &Harness) -> BTreeSet<String> {
    h.events(HELD_REASON)
        .iter()
        .filter_map(|event| event.involved_object.name.clone())
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|name| name.to_string()).collect()
}

fn exist(h: &Harness, nodes: &[&str]) -> bool {
    nodes.iter().all(|name| h.node(name).is_some())
}

fn deletes(h: &Harness, nodes: &[&str]) -> usize {
    nodes
        .iter()
        .map(|name| h.requests("DELETE", &format!("/api/v1/nodes/{name}")))
        .sum()
}

/// Renames vApp `from` to `to`: its VMs vanish from the VM query, as after
/// a rename in VCD or a role that may no longer see them.
fn rename_vapp(sim: &Sim, from: &str, to: &str) {
    sim.with_world(|w| {
        let vapp = w
            .vapps
            .iter_mut()
            .find(|vapp| vapp.name == from)
            .unwrap_or_else(|| panic!("no vApp {from}"));
        vapp.name = to.to_string();
    });
}

fn assert_warning(event: &Event, fragment: &str) {
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(
        event.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("cloud-node-lifecycle-controller")
    );
    let message = event.message.as_deref().unwrap_or_default();
    assert!(message.contains(fragment), "{message}");
    assert!(message.contains("VCD role"), "{message}");
    assert!(message.contains("vAppName"), "{message}");
}

#[tokio::test]
async fn an_empty_inventory_deletes_no_node_until_the_vms_are_visible_again() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    let all = ["control-plane-0", "worker-0", "worker-1"];
    for name in all {
        h.create(initialized_node(name, &h.provider_id(name), false));
    }
    holds_across(
        "NotReady Nodes whose VMs exist stay",
        3,
        || h.lifecycle_passes(),
        || exist(&h, &all),
    )
    .await;
    assert_eq!(metric(&h, HELD_GAUGE), 0);

    rename_vapp(&h.vcd, "cluster1", "cluster1-renamed");
    eventually("all three Nodes held", || {
        (metric(&h, HELD_GAUGE) == 3 && held_events(&h) == names(&all)).then_some(())
    })
    .await;
    h.next_pass().await;
    let passes = metric(&h, HELD_PASSES);
    holds_across(
        "no Node is deleted",
        3,
        || h.lifecycle_passes(),
        || exist(&h, &all),
    )
    .await;
    assert!(metric(&h, HELD_PASSES) >= passes + 3, "every pass is held");
    assert_eq!(metric(&h, HELD_GAUGE), 3);
    assert_eq!(deletes(&h, &all), 0);
    assert!(h.events("DeletingNode").is_empty());
    let events = h.events(HELD_REASON);
    // One Event per Node: repeats within the hold are not new Events.
    assert_eq!(events.len(), 3, "{events:?}");
    for event in &events {
        assert_warning(event, "the VM inventory of vApp 'cluster1' is empty");
    }

    rename_vapp(&h.vcd, "cluster1-renamed", "cluster1");
    eventually("the guard releases", || {
        (metric(&h, HELD_GAUGE) == 0).then_some(())
    })
    .await;
    h.next_pass().await;
    let passes = metric(&h, HELD_PASSES);
    holds_across(
        "Nodes whose VMs are back stay",
        3,
        || h.lifecycle_passes(),
        || exist(&h, &all),
    )
    .await;
    assert_eq!(metric(&h, HELD_PASSES), passes, "no pass is held any more");
    assert_eq!(deletes(&h, &all), 0);
}

/// Four Nodes: control-plane-0 Ready with its VM; worker-0 and worker-1
/// NotReady with their VMs removed; worker-9 NotReady without a VM. Made
/// before the controllers start, so no pass sees only some of them gone.
async fn three_of_four_gone(fraction: f64) -> Harness {
    let fraction = DeletionFraction::new(fraction).expect("a valid fraction");
    let seed = |vcd: &Sim, kube: &KubeSim| {
        let urn = |name: &str| {
            vcd.with_world(|w| {
                w.vms
                    .iter()
                    .find(|vm| vm.name == name)
                    .map(|vm| vm.id.clone())
            })
            .unwrap_or_else(|| panic!("no VM {name}"))
        };
        let node = |name: &str, ready: bool| {
            let id = format!("vmware-cloud-director://{}", urn(name));
            kube.seed(initialized_node(name, &id, ready))
                .expect("the node is created");
        };
        node("control-plane-0", true);
        node("worker-0", false);
        node("worker-1", false);
        kube.seed(kubelet_node("worker-9", false, false))
            .expect("the node is created");
        for name in ["worker-0", "worker-1"] {
            let urn = urn(name);
            vcd.with_world(|w| w.remove_vm(&urn))
                .expect("the VM is removed");
        }
    };
    Harness::start_with(instances_config(HostnameSource::None), fraction, seed).await
}

const GONE: [&str; 3] = ["worker-0", "worker-1", "worker-9"];

#[tokio::test]
async fn more_than_the_fraction_of_the_nodes_at_once_is_not_deleted() {
    let h = three_of_four_gone(0.5).await;
    eventually("the three Nodes held", || {
        (metric(&h, HELD_GAUGE) == 3 && held_events(&h) == names(&GONE)).then_some(())
    })
    .await;
    holds_across(
        "no Node is deleted",
        3,
        || h.lifecycle_passes(),
        || exist(&h, &GONE) && exist(&h, &["control-plane-0"]),
    )
    .await;
    assert_eq!(deletes(&h, &GONE), 0);
    assert!(metric(&h, HELD_PASSES) >= 3);
    for event in h.events(HELD_REASON) {
        assert_warning(
            &event,
            "3 of 4 Nodes would be deleted in one pass, above the limit of 50% set by --max-node-deletion-fraction",
        );
    }
}

#[tokio::test]
async fn a_fraction_of_one_deletes_every_node_whose_vm_is_gone() {
    let h = three_of_four_gone(1.0).await;
    eventually("the three Nodes deleted", || {
        GONE.iter().all(|name| h.node(name).is_none()).then_some(())
    })
    .await;
    assert!(h.node("control-plane-0").is_some(), "Ready: kept");
    assert_eq!(h.events("DeletingNode").len(), 3);
    assert!(h.events(HELD_REASON).is_empty());
    assert_eq!(metric(&h, HELD_GAUGE), 0);
    assert_eq!(metric(&h, HELD_PASSES), 0);
}

#[tokio::test]
async fn a_single_not_ready_node_whose_vm_is_gone_is_deleted_as_before() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    let all = ["control-plane-0", "worker-0", "worker-1"];
    for name in all {
        h.create(initialized_node(name, &h.provider_id(name), false));
    }
    holds_across(
        "NotReady Nodes whose VMs exist stay",
        3,
        || h.lifecycle_passes(),
        || exist(&h, &all),
    )
    .await;
    h.remove_vm("worker-0");
    eventually("worker-0 deleted", || {
        h.node("worker-0").is_none().then_some(())
    })
    .await;
    holds_across(
        "the others stay",
        3,
        || h.lifecycle_passes(),
        || exist(&h, &["control-plane-0", "worker-1"]),
    )
    .await;
    assert!(h.events(HELD_REASON).is_empty());
    assert_eq!(metric(&h, HELD_PASSES), 0);
}

#[tokio::test]
async fn the_only_node_is_deleted_while_the_inventory_sees_other_vms() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    h.create(initialized_node(
        "worker-0",
        &h.provider_id("worker-0"),
        false,
    ));
    holds_across(
        "worker-0 stays while its VM exists",
        3,
        || h.lifecycle_passes(),
        || h.node("worker-0").is_some(),
    )
    .await;
    // 1 of 1 Node goes: the fraction does not apply to a single Node, and
    // the inventory still holds control-plane-0 and worker-1.
    h.remove_vm("worker-0");
    eventually("worker-0 deleted", || {
        h.node("worker-0").is_none().then_some(())
    })
    .await;
    assert!(h.events(HELD_REASON).is_empty());
}

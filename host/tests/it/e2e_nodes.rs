//! The cloud node controller and the node lifecycle controller end to end:
//! the real controllers against kubesim (the Kubernetes API) and vcdsim (the
//! VMs of vApp `cluster1`).

use crate::support::nodes::*;
use serde_json::json;
use vcd_ccm::instances::HostnameSource;
use vcdsim::world::compute::PowerState;

const INSTANCE_TYPE: &str = "vcd-vm.cpu-2.mem-4GiB";

#[tokio::test]
async fn an_uninitialized_node_is_initialized_from_its_vm() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    let created = h.create(kubelet_node("worker-0", true, true));
    let provider_id = h.provider_id("worker-0");
    assert!(provider_id.starts_with("vmware-cloud-director://urn:vcloud:vm:"));

    let node = eventually("worker-0 loses the uninitialized taint", || {
        h.node("worker-0").filter(|n| !has_taint(n, UNINITIALIZED))
    })
    .await;
    assert_eq!(
        node.spec.as_ref().unwrap().provider_id.as_deref(),
        Some(provider_id.as_str())
    );
    assert_eq!(taint_keys(&node), ["dedicated"], "other taints stay");
    for (key, value) in [
        ("node.kubernetes.io/instance-type", INSTANCE_TYPE),
        ("beta.kubernetes.io/instance-type", INSTANCE_TYPE),
        ("topology.kubernetes.io/zone", ZONE),
        ("failure-domain.beta.kubernetes.io/zone", ZONE),
        ("topology.kubernetes.io/region", REGION),
        ("failure-domain.beta.kubernetes.io/region", REGION),
    ] {
        assert_eq!(label(&node, key), Some(value), "{key}");
    }
    // The cloud reports no hostname here, so the kubelet's stays.
    let node = eventually("worker-0 gets its cloud addresses", || {
        h.node("worker-0").filter(|n| addresses(n).len() == 2)
    })
    .await;
    assert_eq!(
        addresses(&node),
        [
            ("InternalIP".to_string(), "10.0.0.11".to_string()),
            (
                "Hostname".to_string(),
                "worker-0.kubelet.example".to_string()
            ),
        ]
    );

    let synced = eventually("a Synced event", || h.events("Synced").into_iter().next()).await;
    assert_eq!(synced.type_.as_deref(), Some("Normal"));
    assert_eq!(synced.message.as_deref(), Some("Node synced successfully"));
    assert_eq!(
        synced.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("cloud-node-controller")
    );
    assert_eq!(synced.involved_object.kind.as_deref(), Some("Node"));
    assert_eq!(synced.involved_object.name.as_deref(), Some("worker-0"));
    assert_eq!(synced.involved_object.uid, created.metadata.uid);
    assert_eq!(synced.metadata.namespace.as_deref(), Some("default"));

    assert_eq!(h.requests("PUT", "/api/v1/nodes/worker-0"), 1, "one PUT");
    assert_eq!(h.requests("PATCH", "/api/v1/nodes/worker-0/status"), 1);
    assert_eq!(
        h.histogram_count("node_controller_cloud_provider_taint_removal_delay_seconds"),
        1.0
    );
    assert_eq!(
        h.histogram_count("node_controller_initial_node_sync_delay_seconds"),
        1.0
    );
}

#[tokio::test]
async fn the_cloud_hostname_replaces_the_kubelets() {
    let h = Harness::start(instances_config(HostnameSource::VmName)).await;
    h.create(kubelet_node("control-plane-0", true, true));
    let node = eventually("control-plane-0 gets its cloud addresses", || {
        h.node("control-plane-0")
            .filter(|n| !has_taint(n, UNINITIALIZED) && addresses(n).len() == 2)
    })
    .await;
    assert_eq!(
        addresses(&node),
        [
            ("InternalIP".to_string(), "10.0.0.10".to_string()),
            ("Hostname".to_string(), "control-plane-0".to_string()),
        ]
    );
}

#[tokio::test]
async fn a_provided_node_ip_picks_the_address_and_a_foreign_one_keeps_the_taint() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    h.add_vm(
        "worker-2",
        json!([{"network": "net1", "ip": "10.0.0.21"}, {"network": "net1", "ip": "10.0.0.22"}]),
    );
    let mut matching = kubelet_node("worker-2", true, true);
    matching["metadata"]["annotations"] =
        json!({"alpha.kubernetes.io/provided-node-ip": "10.0.0.22"});
    h.create(matching);
    let mut foreign = kubelet_node("worker-1", true, true);
    foreign["metadata"]["annotations"] =
        json!({"alpha.kubernetes.io/provided-node-ip": "10.9.9.9"});
    h.create(foreign);

    // The provided IP comes first; the VM's other internal IP is dropped.
    let node = eventually("worker-2 initialized with its addresses", || {
        h.node("worker-2")
            .filter(|n| !has_taint(n, UNINITIALIZED) && !addresses(n).is_empty())
            .filter(|n| addresses(n).iter().any(|(t, _)| t == "InternalIP"))
    })
    .await;
    assert_eq!(
        addresses(&node),
        [
            ("InternalIP".to_string(), "10.0.0.22".to_string()),
            (
                "Hostname".to_string(),
                "worker-2.kubelet.example".to_string()
            ),
        ]
    );

    // Two failed syncs: the first, and a retry after its backoff.
    holds_across(
        "worker-1 keeps the taint",
        2,
        || h.sync_failures(),
        || {
            h.node("worker-1")
                .is_some_and(|n| has_taint(&n, UNINITIALIZED))
        },
    )
    .await;
    assert_eq!(h.requests("PUT", "/api/v1/nodes/worker-1"), 0);
    assert!(
        h.node("worker-1")
            .unwrap()
            .spec
            .unwrap()
            .provider_id
            .is_none()
    );

    // The kubelet's IP corrected, the retry initialises it.
    h.annotate(
        "worker-1",
        "alpha.kubernetes.io/provided-node-ip",
        "10.0.0.12",
    )
    .await;
    eventually("worker-1 initialized", || {
        h.node("worker-1").filter(|n| !has_taint(n, UNINITIALIZED))
    })
    .await;
}

#[tokio::test]
async fn a_node_without_a_vm_stays_tainted_and_is_retried_until_the_vm_appears() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    h.create(kubelet_node("worker-9", true, true));
    holds_across(
        "worker-9 keeps the taint",
        2,
        || h.sync_failures(),
        || {
            h.node("worker-9")
                .is_some_and(|n| has_taint(&n, UNINITIALIZED))
        },
    )
    .await;
    assert_eq!(h.requests("PUT", "/api/v1/nodes/worker-9"), 0);

    // No Node event follows: only the backoff requeue can pick this up.
    h.add_vm("worker-9", json!([{"network": "net1", "ip": "10.0.0.99"}]));
    let node = eventually("worker-9 initialized", || {
        h.node("worker-9").filter(|n| !has_taint(n, UNINITIALIZED))
    })
    .await;
    assert_eq!(
        node.spec.unwrap().provider_id,
        Some(h.provider_id("worker-9"))
    );
}

#[tokio::test]
async fn an_initialized_node_gets_ga_labels_from_its_beta_labels() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    let mut node = initialized_node("worker-0", &h.provider_id("worker-0"), true);
    node["metadata"]["labels"] = json!({
        "failure-domain.beta.kubernetes.io/zone": "old-zone",
        "topology.kubernetes.io/zone": "stale",
        "beta.kubernetes.io/instance-type": "old-type",
        "topology.kubernetes.io/region": "ga-only",
    });
    h.create(node);
    let node = eventually("GA labels copied", || {
        h.node("worker-0")
            .filter(|n| label(n, "node.kubernetes.io/instance-type").is_some())
    })
    .await;
    assert_eq!(
        label(&node, "topology.kubernetes.io/zone"),
        Some("old-zone")
    );
    assert_eq!(
        label(&node, "node.kubernetes.io/instance-type"),
        Some("old-type")
    );
    assert_eq!(
        label(&node, "topology.kubernetes.io/region"),
        Some("ga-only")
    );
    assert_eq!(
        label(&node, "failure-domain.beta.kubernetes.io/region"),
        None
    );
}

#[tokio::test]
async fn a_not_ready_node_whose_vm_is_gone_is_deleted_but_a_ready_one_is_kept() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    let not_ready = h.create(initialized_node(
        "worker-0",
        &h.provider_id("worker-0"),
        false,
    ));
    h.create(initialized_node(
        "worker-1",
        &h.provider_id("worker-1"),
        true,
    ));
    // Both VMs exist: nothing happens to either node.
    holds_across(
        "both nodes stay",
        3,
        || h.lifecycle_passes(),
        || h.node("worker-0").is_some() && h.node("worker-1").is_some(),
    )
    .await;

    h.remove_vm("worker-0");
    h.remove_vm("worker-1");
    eventually("worker-0 deleted", || {
        h.node("worker-0").is_none().then_some(())
    })
    .await;
    let deleting = h.events("DeletingNode");
    assert_eq!(deleting.len(), 1, "{deleting:?}");
    let event = &deleting[0];
    assert_eq!(event.type_.as_deref(), Some("Normal"));
    assert_eq!(
        event.message.as_deref(),
        Some("Deleting node worker-0 because it does not exist in the cloud provider")
    );
    assert_eq!(event.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(event.involved_object.api_version.as_deref(), Some("v1"));
    assert_eq!(event.involved_object.kind.as_deref(), Some("Node"));
    assert_eq!(event.involved_object.name.as_deref(), Some("worker-0"));
    assert_eq!(event.involved_object.uid, not_ready.metadata.uid);
    assert_eq!(
        event.source.as_ref().and_then(|s| s.component.as_deref()),
        Some("cloud-node-lifecycle-controller")
    );
    assert_eq!(h.requests("DELETE", "/api/v1/nodes/worker-0"), 1);

    holds_across(
        "the Ready worker-1 is kept",
        3,
        || h.lifecycle_passes(),
        || h.node("worker-1").is_some(),
    )
    .await;
    assert_eq!(h.requests("DELETE", "/api/v1/nodes/worker-1"), 0);

    h.set_ready("worker-1", false).await;
    eventually("worker-1 deleted once NotReady", || {
        h.node("worker-1").is_none().then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_shut_down_vm_taints_its_not_ready_node_until_it_is_ready_again() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    h.create(initialized_node(
        "worker-0",
        &h.provider_id("worker-0"),
        false,
    ));
    h.create(initialized_node(
        "worker-1",
        &h.provider_id("worker-1"),
        true,
    ));
    h.set_power("worker-0", PowerState::PoweredOff);
    h.set_power("worker-1", PowerState::PoweredOff);

    let node = eventually("worker-0 gets the shutdown taint", || {
        h.node("worker-0").filter(|n| has_taint(n, SHUTDOWN))
    })
    .await;
    let taint = node
        .spec
        .unwrap()
        .taints
        .unwrap()
        .into_iter()
        .find(|t| t.key == SHUTDOWN)
        .unwrap();
    assert_eq!(taint.effect, "NoSchedule");
    assert_eq!(taint.value, None);
    assert!(
        h.node("worker-1").is_some_and(|n| !has_taint(&n, SHUTDOWN)),
        "Ready: no taint"
    );

    // Powered on but still NotReady: the taint stays.
    h.set_power("worker-0", PowerState::PoweredOn);
    holds_across(
        "the taint stays while NotReady",
        3,
        || h.lifecycle_passes(),
        || h.node("worker-0").is_some_and(|n| has_taint(&n, SHUTDOWN)),
    )
    .await;

    h.set_ready("worker-0", true).await;
    let node = eventually("the shutdown taint is removed once Ready", || {
        h.node("worker-0").filter(|n| !has_taint(n, SHUTDOWN))
    })
    .await;
    assert_eq!(taint_keys(&node), ["dedicated"], "other taints stay");
    // Ready without the taint: no more taint writes.
    let patches = h.requests("PATCH", "/api/v1/nodes/worker-0");
    holds_across(
        "no more taint writes",
        3,
        || h.lifecycle_passes(),
        || h.requests("PATCH", "/api/v1/nodes/worker-0") == patches,
    )
    .await;
    assert_eq!(h.requests("PATCH", "/api/v1/nodes/worker-1"), 0);
}

#[tokio::test]
async fn the_address_refresh_picks_up_a_changed_vm_ip() {
    let h = Harness::start(instances_config(HostnameSource::None)).await;
    h.create(kubelet_node("worker-1", true, true));
    eventually("worker-1 gets its cloud address", || {
        h.node("worker-1")
            .filter(|n| addresses(n).contains(&("InternalIP".to_string(), "10.0.0.12".to_string())))
    })
    .await;
    // Two more refreshes (each reloads the expired inventory) write nothing:
    // the addresses are unchanged.
    let loads = h.inventory_loads();
    eventually("two address refreshes", || {
        (h.inventory_loads() >= loads + 2).then_some(())
    })
    .await;
    assert_eq!(h.requests("PATCH", "/api/v1/nodes/worker-1/status"), 1);

    h.set_primary_ip("worker-1", "10.0.0.112");
    let node = eventually("the refresh writes the new IP", || {
        h.node("worker-1").filter(|n| {
            addresses(n).contains(&("InternalIP".to_string(), "10.0.0.112".to_string()))
        })
    })
    .await;
    assert_eq!(
        addresses(&node),
        [
            ("InternalIP".to_string(), "10.0.0.112".to_string()),
            (
                "Hostname".to_string(),
                "worker-1.kubelet.example".to_string()
            ),
        ]
    );
    assert!(!has_taint(&node, UNINITIALIZED));
}

//! Nodes of a zone-enabled cluster in two VDCs (CAPVCD names each VDC's vApp
//! after the VDC): each Node gets its VDC's zone from the zones file (which
//! names a VDC by name or by URN), and a VM moved to the other VDC keeps its
//! Node.

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;
use vcdsim::Scenario;
use vcdsim::scenario::VmSpec;

use super::{WAIT, initialised_nodes, label, vdc_and_vapp};
use crate::e2e_run::START;
use crate::support::poll::wait_until;
use crate::support::run::World;

const ZONE: &str = "topology.kubernetes.io/zone";

/// vApps renamed `<vAppName>_<VDC uuid>_workers`, as CAPVCD names them.
fn name_vapps_by_vdc(world: &World) {
    world.vcd.with_world(|w| {
        for vapp in &mut w.vapps {
            let uuid = vapp
                .vdc_id
                .rsplit(':')
                .next()
                .unwrap_or_default()
                .to_string();
            vapp.name = format!("{}_{uuid}_workers", vapp.name);
        }
    });
}

/// Zones on, with vdc1 (by name) in zone-a and vdc2 (by URN) in zone-b.
fn enable_zones(world: &World) {
    let zones = world.dir.path().join("zones.yaml");
    let (vdc2, _) = world.vcd.with_world(|w| vdc_and_vapp(w, "vdc2"));
    std::fs::write(
        &zones,
        format!("zoneType: dcgroup\nzones:\n  - {{name: zone-a, ovdcName: vdc1}}\n  - {{name: zone-b, ovdcName: {vdc2}}}\n"),
    )
    .expect("the zones file is written");
    let path = &world.files.cloud_config;
    let text = std::fs::read_to_string(path).expect("the cloud config");
    let text = text.replacen(
        "  vdc: vdc1\n",
        "  vdc: vdc1\n  isZoneEnabledCluster: true\n",
        1,
    ) + &format!("nodes:\n  zonesFile: {}\n", zones.display());
    std::fs::write(path, text).expect("the cloud config is written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_node_gets_its_vdcs_zone_and_a_moved_vm_keeps_its_node() {
    let world = World::start_on(Scenario::dc_group()).await;
    name_vapps_by_vdc(&world);
    enable_zones(&world);
    world.add_new_nodes().await;
    let ccm = world.spawn(
        "dc-group-zones",
        &["--leader-elect=false", "--node-monitor-period=1s"],
    );
    wait_until("the process to be ready", START, || ccm.ready()).await;

    let nodes = initialised_nodes(&world).await;
    let zones: Vec<Option<&str>> = nodes.iter().map(|n| label(n, ZONE)).collect();
    assert_eq!(
        zones,
        [Some("zone-a"), Some("zone-b")],
        "worker-0 in vdc1, worker-1 in vdc2"
    );
    let provider_id = |node: &Node| node.spec.as_ref().and_then(|s| s.provider_id.clone());
    let before = provider_id(&nodes[1]);

    // worker-1 moves to vdc1 (same VM, same address); worker-2 then joins in
    // vdc2, so the inventory is read again after the move.
    let (_, vdc1_vapp) = world.vcd.with_world(|w| vdc_and_vapp(w, "vdc1"));
    let (_, vdc2_vapp) = world.vcd.with_world(|w| vdc_and_vapp(w, "vdc2"));
    world.vcd.with_world(|w| {
        let vm = w
            .vms
            .iter()
            .find(|v| v.name == "worker-1")
            .unwrap()
            .id
            .clone();
        w.move_vm(&vm, &vdc1_vapp).unwrap();
        let spec: VmSpec = serde_json::from_value(
            json!({"name": "worker-2", "nics": [{"network": "net1", "ip": "10.0.0.13"}]}),
        )
        .unwrap();
        w.add_vm(&vdc2_vapp, &spec).unwrap();
    });
    let api: Api<Node> = Api::all(world.client.clone());
    let joining: Node = serde_json::from_value(json!({
        "metadata": {"name": "worker-2"},
        "spec": {"taints": [{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .unwrap();
    api.create(&PostParams::default(), &joining)
        .await
        .expect("worker-2 joins");
    let (joined, _) = wait_until("worker-2 initialised", WAIT, || async {
        let node = api.get("worker-2").await.map_err(|e| e.to_string())?;
        match node.spec.as_ref().and_then(|s| s.taints.as_ref()) {
            Some(taints) if !taints.is_empty() => Err("still tainted".to_string()),
            _ => Ok(node),
        }
    })
    .await;
    assert_eq!(label(&joined, ZONE), Some("zone-b"));

    // worker-1 NotReady while it moves: the lifecycle monitor finds its VM
    // (in vdc1 now) and keeps the Node, over several passes.
    let not_ready = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
    api.patch_status(
        "worker-1",
        &PatchParams::default(),
        &Patch::Merge(&not_ready),
    )
    .await
    .expect("worker-1 NotReady");
    let passes = ccm
        .metric("vcd_ccm_node_lifecycle_passes_total")
        .await
        .unwrap_or_default();
    wait_until("three lifecycle passes", WAIT, || async {
        let now = ccm.metric("vcd_ccm_node_lifecycle_passes_total").await?;
        if api
            .get_opt("worker-1")
            .await
            .map_err(|e| e.to_string())?
            .is_none()
        {
            panic!("worker-1 was deleted although its VM only moved");
        }
        match now >= passes + 3.0 {
            true => Ok(()),
            false => Err(format!("{now} passes")),
        }
    })
    .await;
    let kept = api.get("worker-1").await.expect("worker-1 is kept");
    assert_eq!(provider_id(&kept), before, "the same providerID");
    assert_eq!(
        label(&kept, ZONE),
        Some("zone-b"),
        "labels set at initialisation stay"
    );
}

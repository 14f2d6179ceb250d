//! A cluster across two VDCs of a data-center group (vcdsim's `dc-group`
//! scenario: worker-0 in vdc1, worker-1 in vdc2, the network and edge
//! gateway owned by the group), served by `vcd-ccm run`.

mod load_balancers;
mod nodes;
mod placement;

use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use vcdsim::Scenario;
use vcdsim::scenario::DC_GROUP_SCENARIO;

use crate::support::poll::wait_until;
use crate::support::run::NODES;

const WAIT: Duration = Duration::from_secs(60);

/// The DC-group world with the group's gateway on a PUBLIC IP Space
/// instead of IP blocks.
fn on_ip_spaces() -> Scenario {
    let blocks = "        subnets:\n          - cidr: 203.0.113.1/24\n            primaryIp: 203.0.113.10\n            ranges: [\"203.0.113.10-203.0.113.50\"]\n";
    let space = "ipSpaces:\n  - name: public1\n    type: PUBLIC\n    ranges: [\"192.0.2.10-192.0.2.14\"]\n    internalScope: [\"192.0.2.0/24\"]\n    externalScope: 0.0.0.0/0\n    defaultFloatingIpQuota: 3\norgs:\n";
    let yaml = DC_GROUP_SCENARIO
        .replace(blocks, "        ipSpaces: [public1]\n")
        .replacen("orgs:\n", space, 1);
    assert!(
        yaml.contains("ipSpaces: [public1]") && !yaml.contains("203.0.113.1/24"),
        "the scenario's gateway moved to IP Spaces"
    );
    Scenario::from_yaml(&yaml).expect("the scenario parses")
}

/// The ids of a VDC and of the vApp the cluster has in it.
fn vdc_and_vapp(world: &vcdsim::world::World, vdc: &str) -> (String, String) {
    let vdc_id = world
        .vdcs
        .iter()
        .find(|v| v.name == vdc)
        .map(|v| v.id.clone())
        .expect("the VDC");
    let vapp = world
        .vapps
        .iter()
        .find(|a| a.vdc_id == vdc_id)
        .map(|a| a.id.clone())
        .expect("the VDC's vApp");
    (vdc_id, vapp)
}

/// The workers once the cloud node controller initialised them.
async fn initialised_nodes(world: &crate::support::run::World) -> Vec<Node> {
    let nodes: Api<Node> = Api::all(world.client.clone());
    let (found, _) = wait_until("the Nodes initialised", WAIT, || async {
        let mut found = Vec::new();
        for (name, _) in NODES {
            let node = nodes.get(name).await.map_err(|e| e.to_string())?;
            let spec = node.spec.clone().unwrap_or_default();
            if spec.provider_id.is_none() || !spec.taints.unwrap_or_default().is_empty() {
                return Err(format!("{name} not initialised yet"));
            }
            found.push(node);
        }
        Ok(found)
    })
    .await;
    found
}

fn label<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    node.metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(key))
        .map(String::as_str)
}

//! Shared helpers of the instances tests: vcdsim worlds with a cluster
//! vApp (or one per zone) and an `Instances` over a tenant client.

use std::time::Duration;

use vcd_ccm::instances::{ClusterVApps, Instances, InstancesConfig};
use vcd_ccm::vcd::VcdClient;
use vcdsim::Sim;

use crate::support::vcd;

pub const QUERY: &str = "GET /api/query";
pub const VAPP_OR_VM: &str = "GET /api/vApp/{reference}";

/// A vApp: its name and its VMs as lines in the scenario's YAML flow form.
pub type VAppSpec<'a> = (&'a str, Vec<String>);

/// A tenant org `org1` with `vdcs`, each given as (VDC name, vApps).
pub fn world_yaml(vdcs: &[(&str, Vec<VAppSpec>)]) -> String {
    let mut yaml = String::from(
        "orgs:\n  - name: org1\n    users:\n      - {name: k8s-cpi, password: pw, apiTokens: [org1-token]}\n    vdcs:\n",
    );
    for (vdc, vapps) in vdcs {
        yaml.push_str(&format!("      - name: {vdc}\n        vapps:\n"));
        for (vapp, vms) in vapps {
            yaml.push_str(&format!("          - name: {vapp}\n            vms:\n"));
            for vm in vms {
                yaml.push_str(&format!("              - {vm}\n"));
            }
        }
    }
    yaml
}

/// A worker VM line with one NIC on `net1`.
pub fn worker(name: &str, ip: &str) -> String {
    format!("{{name: {name}, nics: [{{network: net1, ip: {ip}}}]}}")
}

/// `count` workers `worker-<i>` with IPs 10.0.<i/200>.<i%200+10>.
pub fn workers(count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            worker(
                &format!("worker-{i}"),
                &format!("10.0.{}.{}", i / 200, i % 200 + 10),
            )
        })
        .collect()
}

pub async fn start(yaml: &str) -> Sim {
    Sim::from_yaml(yaml).await.expect("vcdsim starts")
}

/// A single-zone config for vApp `cluster1`.
pub fn single_zone() -> InstancesConfig {
    InstancesConfig::new(ClusterVApps::Named("cluster1".into()))
}

pub async fn client(sim: &Sim) -> VcdClient {
    vcd::tenant_client(sim).await
}

pub async fn instances(sim: &Sim, config: InstancesConfig) -> Instances {
    Instances::new(client(sim).await, config).expect("a valid config")
}

/// The URN of the VM named `name`.
pub fn vm_urn(sim: &Sim, name: &str) -> String {
    sim.with_world(|w| {
        w.vms
            .iter()
            .find(|vm| vm.name == name)
            .map(|vm| vm.id.clone())
            .expect("the VM exists")
    })
}

pub fn provider_id(sim: &Sim, name: &str) -> String {
    format!("vmware-cloud-director://{}", vm_urn(sim, name))
}

/// VM queries plus vApp/VM GETs since the last reset.
pub fn inventory_calls(sim: &Sim) -> u64 {
    sim.count(QUERY) + sim.count(VAPP_OR_VM)
}

/// Long enough for any test: lookups never expire by accident.
pub const LONG: Duration = Duration::from_secs(3600);

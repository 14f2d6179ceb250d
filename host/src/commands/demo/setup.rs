//! The demo's world: vcdsim's default or DC-group scenario (its vApps
//! renamed the way CAPVCD names a multi-zone cluster's vApps, so zones show,
//! and its gateway given IPv6 addresses, so a dual-stack Service shows),
//! kubesim, and the files `vcd-ccm run` would read — cloud config,
//! credential Secret, zones file (a zone per VDC), policy directory with the
//! example policy.

use std::path::{Path, PathBuf};

use anyhow::Context;
use sha2::{Digest, Sha256};
use vcdsim::scenario::GatewaySubnetSpec;
use vcdsim::{Scenario, Sim};

use crate::cli::DemoScenario;

/// The example provider policy (`policies/examples/namespace-pools`).
const EXAMPLE_POLICY: &[u8] = include_bytes!(concat!(
    env!("VCD_CCM_POLICY_ARTIFACTS"),
    "/namespace_pools.wasm"
));

/// The namespace label the example policy's selector and settings use.
pub const POOL_LABEL: &str = "vcd-ccm.io/address-pool";
pub const UDP_LABEL: &str = "vcd-ccm.io/allow-udp";
pub const REGION: &str = "demo-region";

pub struct Files {
    pub cloud_config: PathBuf,
    pub secret_dir: PathBuf,
    pub policy_dir: PathBuf,
}

/// vcdsim and the names of its VMs (one Node each).
pub async fn start_vcd(world: DemoScenario) -> anyhow::Result<(Sim, Vec<String>)> {
    let mut scenario = match world {
        DemoScenario::Default => Scenario::default_scenario(),
        DemoScenario::DcGroup => Scenario::dc_group(),
    };
    with_ipv6(&mut scenario)?;
    let sim = Sim::start(scenario).await.context("vcdsim")?;
    let vms = sim.with_world(|world| {
        for vapp in &mut world.vapps {
            let vdc_uuid = vapp
                .vdc_id
                .rsplit(':')
                .next()
                .unwrap_or_default()
                .to_string();
            vapp.name = format!("{}_{vdc_uuid}_workers", vapp.name);
        }
        world.vms.iter().map(|vm| vm.name.clone()).collect()
    });
    Ok((sim, vms))
}

/// The gateway gains an IPv6 subnet and its load balancer the IPv6 service
/// network IPv6 virtual services need.
fn with_ipv6(scenario: &mut Scenario) -> anyhow::Result<()> {
    let gateway = scenario
        .orgs
        .first_mut()
        .and_then(|org| org.edge_gateways.first_mut())
        .context("vcdsim's default scenario has no edge gateway")?;
    gateway.subnets.push(GatewaySubnetSpec {
        cidr: "2001:db8:1::1/64".into(),
        primary_ip: Some("2001:db8:1::10".into()),
        ranges: vec!["2001:db8:1::10-2001:db8:1::50".into()],
    });
    gateway.load_balancer.ipv6_service_network_definition = Some("fd00:ffff::1/64".into());
    Ok(())
}

/// The zones file: `zone-a` for the first VDC, `zone-b` for the next, ….
fn zones(sim: &Sim) -> String {
    let vdcs: Vec<String> = sim.with_world(|w| w.vdcs.iter().map(|v| v.name.clone()).collect());
    let entries: String = vdcs
        .iter()
        .zip('a'..='z')
        .map(|(vdc, letter)| format!("  - name: zone-{letter}\n    ovdcName: {vdc}\n"))
        .collect();
    format!("zoneType: dcgroup\nzones:\n{entries}")
}

/// Writes the configuration files into `dir`.
pub fn write_files(dir: &Path, sim: &Sim) -> anyhow::Result<Files> {
    let tenant = sim.tenant().context("vcdsim has no tenant user")?;
    let write = |path: &Path, contents: &[u8]| {
        std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
    };
    let secret_dir = dir.join("basic-auth");
    let policy_dir = dir.join("policies");
    for sub in [&secret_dir, &policy_dir] {
        std::fs::create_dir_all(sub).with_context(|| format!("creating {}", sub.display()))?;
    }
    write(
        &secret_dir.join("username"),
        format!("{}/{}", tenant.org, tenant.user).as_bytes(),
    )?;
    write(&secret_dir.join("password"), tenant.password.as_bytes())?;
    write(&secret_dir.join("refreshToken"), b"")?;
    let zones_file = dir.join("vcloud-cse-zones.yaml");
    write(&zones_file, zones(sim).as_bytes())?;
    let cloud_config = dir.join("vcloud-ccm-config.yaml");
    write(
        &cloud_config,
        format!(
            "vcd:
  host: {host}
  org: {org}
  vdc: vdc1
  isZoneEnabledCluster: true
loadbalancer:
  network: net1
  enableVirtualServiceSharedIP: true
  certAlias: my-cert
  manageFirewall: true
clusterid: NO_RDE_vcd-ccm-demo
vAppName: cluster1
nodes:
  region: {REGION}
  zonesFile: {zones}
",
            host = sim.base_url(),
            org = tenant.org,
            zones = zones_file.display(),
        )
        .as_bytes(),
    )?;
    write(&policy_dir.join("namespace-pools.wasm"), EXAMPLE_POLICY)?;
    write(
        &policy_dir.join("policies.yaml"),
        format!(
            "policies:
  - name: namespace-pools
    sha256: {digest}
    selector:
      namespaceSelector:
        matchExpressions:
          - {{key: {POOL_LABEL}, operator: Exists}}
",
            digest = hex::encode(Sha256::digest(EXAMPLE_POLICY)),
        )
        .as_bytes(),
    )?;
    Ok(Files {
        cloud_config,
        secret_dir,
        policy_dir,
    })
}

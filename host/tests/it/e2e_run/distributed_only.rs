//! A distributed-only edge gateway (VCD 10.6, `deploymentMode:
//! DISTRIBUTED_ONLY`: no NAT, no gateway firewall): one-arm and a managed
//! firewall are refused before any write, with the reason on every
//! LoadBalancer Service, while Nodes are served; shared-VIP Services work
//! and never touch NAT or the firewall.

use std::time::Duration;

use serde_json::json;
use vcdsim::Scenario;

use super::START;
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::gateway::vcd_writes;

const WAIT: Duration = Duration::from_secs(60);

/// The default world with its gateway distributed-only, under API 39.1.
fn distributed_only() -> Scenario {
    let yaml = vcdsim::scenario::DEFAULT_SCENARIO.replace(
        "      - name: edge1\n",
        "      - name: edge1\n        deploymentMode: DISTRIBUTED_ONLY\n",
    );
    assert_ne!(yaml, vcdsim::scenario::DEFAULT_SCENARIO);
    Scenario::from_yaml(&yaml).expect("the scenario parses")
}

async fn refused(setting: &str, named: &str) {
    let world = World::start_on(distributed_only()).await;
    world.add_load_balancer_setting(setting);
    world.add_nodes().await;
    world.create_service("web", &[80]).await;
    let ccm = world.spawn("refusing", &["--leader-elect=false"]);
    let (message, _) = wait_until(
        "the Service's Warning Event naming the mode",
        WAIT,
        || async {
            let message = world.latest_event("web", "LoadBalancerUnavailable").await?;
            match message.contains("DISTRIBUTED_ONLY") {
                true => Ok(message),
                false => Err(message),
            }
        },
    )
    .await;
    for words in ["deploymentMode DISTRIBUTED_ONLY", named, "edge1"] {
        assert!(message.contains(words), "{words:?} not in {message}");
    }
    let (status, body) = ccm.get("/readyz").await.expect("/readyz answers");
    assert_eq!(status, 500, "{body}");
    assert!(
        ccm.stderr().contains("DISTRIBUTED_ONLY"),
        "the log names the mode"
    );
    assert_eq!(
        vcd_writes(&world.vcd),
        Vec::<String>::new(),
        "nothing written"
    );
    println!("{setting}: refused with {message:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_arm_is_refused_before_any_write() {
    refused(
        "oneArm: {startIP: 192.168.8.2, endIP: 192.168.8.100}",
        "loadbalancer.oneArm",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_firewall_is_refused_before_any_write() {
    refused("manageFirewall: true", "loadbalancer.manageFirewall").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_vip_services_work_without_nat_or_firewall() {
    let world = World::start_on(distributed_only()).await;
    world.add_nodes().await;
    let ccm = world.spawn("shared-vip", &["--leader-elect=false"]);
    wait_until("the process to be ready", START, || ccm.ready()).await;
    let ranges =
        json!({"service.beta.kubernetes.io/load-balancer-source-ranges": "198.51.100.0/24"});
    world
        .create_annotated_service("web", &[80, 443], ranges)
        .await;
    let (ip, took) = wait_until("an address", WAIT, || world.external_ip("web")).await;
    let (warning, _) = wait_until("the source-ranges Warning", WAIT, || {
        world.latest_event("web", "SourceRangesNotEnforced")
    })
    .await;
    let touched: Vec<String> = world
        .vcd
        .requests()
        .iter()
        .filter(|e| e.path.contains("/nat/") || e.path.contains("/firewall/"))
        .map(|e| format!("{} {} → {}", e.method, e.path, e.status))
        .collect();
    assert_eq!(touched, Vec::<String>::new(), "NAT or firewall calls");
    println!("distributed-only gateway: {ip} after {took:?}; {warning:?}");
}

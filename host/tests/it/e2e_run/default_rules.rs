//! VCD's own default rules on an IP Space gateway (VCD 10.5: NO SNAT, SNAT
//! and an outbound firewall rule, re-applied by VCD at will) are never
//! ours: with one-arm DNAT rules and a managed firewall rule beside them,
//! five re-applications cause no write, and our rules stay as they were.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use vcdsim::{Scenario, Sim};

use super::START;
use crate::support::poll::{holds_across, wait_until};
use crate::support::run::gateway::{drift_checks, vcd_writes};
use crate::support::run::{CLUSTER, World};

const WAIT: Duration = Duration::from_secs(60);
/// Drift repair every half second: a re-application it took for drift
/// would be repaired by the sync the next check queues.
const DRIFT_PERIOD: &str = "--drift-repair-period=500ms";
/// Drift checks a claim of quiet is held across: the syncs the first
/// queued have run by the second.
const CHECKS: u64 = 2;

fn scenario() -> Scenario {
    let base = vcdsim::scenario::IP_SPACE_SCENARIO;
    let yaml = base.replace(
        "    defaultFloatingIpQuota: 3\n",
        "    defaultFloatingIpQuota: 3\n    defaultGatewayServices: true\n",
    );
    assert_ne!(yaml, base);
    Scenario::from_yaml(&yaml).expect("the scenario parses")
}

/// How many writes the process made.
fn writes(vcd: &Sim) -> usize {
    vcd_writes(vcd).len()
}

/// NAT and firewall rules by name, as JSON; `ours` picks ours (tagged for
/// the cluster) or VCD's (named `DEFAULT_…`).
fn rules(vcd: &Sim, ours: bool) -> BTreeMap<String, serde_json::Value> {
    let tagged = format!("cluster={CLUSTER} ");
    let wanted = |name: &str, description: &Option<String>| match ours {
        true => description.as_deref().is_some_and(|d| d.contains(&tagged)),
        false => name.starts_with("DEFAULT_"),
    };
    vcd.with_world(|w| {
        let nat = w
            .nat_rules
            .iter()
            .filter(|r| wanted(&r.body.name, &r.body.description))
            .map(|r| {
                (
                    r.body.name.clone(),
                    json!({"id": r.body.id, "rule": format!("{:?}", r.body)}),
                )
            });
        let firewall = w
            .firewall_rules
            .iter()
            .filter(|r| wanted(&r.body.name, &r.body.description))
            .map(|r| {
                (
                    r.body.name.clone(),
                    json!({"id": r.body.id, "rule": format!("{:?}", r.body)}),
                )
            });
        nat.chain(firewall).collect()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn re_applied_default_rules_cause_no_write() {
    let world = World::start_on(scenario()).await;
    world.add_load_balancer_setting("oneArm: {startIP: 192.168.8.2, endIP: 192.168.8.100}");
    world.add_load_balancer_setting("manageFirewall: true");
    world.add_nodes().await;
    let ccm = world.spawn("defaults", &["--leader-elect=false", DRIFT_PERIOD]);
    wait_until("the process to be ready", START, || ccm.ready()).await;
    let ranges =
        json!({"service.beta.kubernetes.io/load-balancer-source-ranges": "198.51.100.0/24"});
    world
        .create_annotated_service("web", &[80, 443], ranges)
        .await;
    let (ip, _) = wait_until("an address", WAIT, || world.external_ip("web")).await;
    // Two DNAT rules and the firewall rule, then nothing over drift checks.
    wait_until("our rules", WAIT, || async {
        match rules(&world.vcd, true).len() {
            3 => Ok(()),
            n => Err(format!("{n} rules of ours")),
        }
    })
    .await;
    let settled = writes(&world.vcd);
    holds_across(
        "quiet",
        CHECKS,
        || drift_checks(&world.vcd),
        || writes(&world.vcd) == settled,
    )
    .await;
    let ours = rules(&world.vcd, true);
    let defaults = rules(&world.vcd, false);
    assert_eq!(defaults.len(), 3, "VCD's default rules: {defaults:?}");
    let written = writes(&world.vcd);

    let gateway = world.vcd.with_world(|w| w.gateways[0].id.clone());
    for round in 1..=5 {
        let applied = world
            .vcd
            .with_world(|w| vcdsim::world::default_services::apply(w, &gateway))
            .expect("the defaults are re-applied");
        assert!(!applied.created.is_empty(), "round {round}: {applied:?}");
        holds_across(
            "no write",
            CHECKS,
            || drift_checks(&world.vcd),
            || writes(&world.vcd) == written,
        )
        .await;
    }

    assert_eq!(
        writes(&world.vcd),
        written,
        "writes after the re-applications"
    );
    assert_eq!(rules(&world.vcd, true), ours, "our rules changed");
    let now = rules(&world.vcd, false);
    assert_eq!(
        now.keys().collect::<Vec<_>>(),
        defaults.keys().collect::<Vec<_>>()
    );
    assert_ne!(now, defaults, "VCD recreated its NAT rules with new ids");
    assert_eq!(world.external_ip("web").await.unwrap(), ip);
    println!(
        "{written} writes to serve the Service beside VCD's defaults; none after five re-applications"
    );
}

//! Wire truth across the four modes: what the controllers send VCD for
//! Services with TLS, UDP, source ranges, `externalTrafficPolicy: Local`
//! (node probes: tenant monitors and their assignments) and the managed
//! firewall, through updates and deletion, is exactly what the
//! CloudAPI spec of the negotiated version defines (every Cluster-based test checks this too when
//! it ends; this one makes sure each kind of write is covered). Then each
//! kind of body is sent again with every constraint the spec states on it
//! broken in turn (`maxItems`, `minimum`, `enum`, `required`, …), and
//! vcdsim must refuse each one naming the field and the constraint.
//!
//! `cargo test --test it e2e_wire -- --nocapture` prints the refusals per
//! mode, operation and constraint.

use std::collections::BTreeSet;

use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::support::CLUSTER;
use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use crate::support::lb::{self, CERT_ALIAS, ModeKind, SSL_PORTS};
use crate::support::objects::ServiceEdits;
use crate::support::wire;

async fn exercise(scenario: vcdsim::Scenario, mode: ModeKind) -> BTreeSet<String> {
    let cluster = Cluster::start_on(scenario, fast_config(), |c| {
        c.lb_config = lb::config(CLUSTER, mode);
        c.lb_config.manage_firewall = true;
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.add_node("worker-1", "10.0.0.12").await;
    let mut web = lb_service("web", &[(80, 30080), (443, 30443)]);
    web["metadata"]["annotations"] = json!({SSL_PORTS: "443", CERT_ALIAS: "my-cert"});
    web["spec"]["loadBalancerSourceRanges"] = json!(["192.0.2.0/24"]);
    web["spec"]["externalTrafficPolicy"] = json!("Local");
    let mut dns = lb_service("dns", &[(53, 30053)]);
    dns["spec"]["ports"][0]["protocol"] = json!("UDP");
    cluster.create_service("default", web).await;
    cluster.create_service("default", dns).await;
    cluster.wait_for_ip("default", "web").await;
    cluster.wait_for_ip("default", "dns").await;
    cluster
        .services("default")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"loadBalancerSourceRanges": ["198.51.100.0/24"]}})),
        )
        .await
        .unwrap();
    cluster.add_node("worker-2", "10.0.0.13").await;
    wait_for("the source set updated", || async {
        cluster
            .vcd
            .with_world(|w| {
                w.firewall_groups.iter().any(|g| {
                    g.body.ip_addresses.as_deref() == Some(&["198.51.100.0/24".to_string()][..])
                })
            })
            .then_some(())
    })
    .await;
    // dns now served only by Nodes with its endpoints: at API 39.1 its pool
    // probes their healthCheckNodePort through a tenant monitor.
    cluster
        .services("default")
        .patch(
            "dns",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"externalTrafficPolicy": "Local"}})),
        )
        .await
        .unwrap();
    wait_for("dns's node probe", || async {
        cluster
            .vcd
            .with_world(|w| {
                w.monitor_assignments.iter().any(|a| {
                    w.pools.iter().any(|p| {
                        p.id.as_deref() == Some(&a.pool_id)
                            && p.name.starts_with("ingress-pool-default.dns-")
                    })
                })
            })
            .then_some(())
    })
    .await;
    // No ranges any more: the rule itself changes (no sources).
    cluster
        .services("default")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"loadBalancerSourceRanges": null}})),
        )
        .await
        .unwrap();
    wait_for("the source set gone", || async {
        cluster
            .vcd
            .with_world(|w| {
                w.firewall_groups
                    .iter()
                    .filter(|g| g.body.name.starts_with("ingress-fw-"))
                    .all(|g| g.body.name.contains("-dst-"))
            })
            .then_some(())
    })
    .await;
    for name in ["web", "dns"] {
        cluster.delete_service("default", name).await;
        cluster.wait_for_gone("default", name).await;
    }
    let violations = wire::violations(&cluster.vcd);
    assert!(
        violations.is_empty(),
        "{mode:?}:\n{}",
        violations.join("\n")
    );
    let sent = cluster
        .vcd
        .requests()
        .iter()
        .filter(|r| r.method != "GET" && r.template.starts_with("/cloudapi/"))
        .map(|r| r.counter_key())
        .collect();
    // Each body broken in every way the spec constrains it: refused.
    let refused = wire::assert_violations_refused(&cluster.vcd).await;
    for ((operation, kind), count) in &refused {
        println!("| {mode:?} | {operation} | {kind} | {count} |");
    }
    assert!(!refused.is_empty(), "{mode:?}: no constraint to break");
    sent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_body_sent_in_every_mode_is_what_the_spec_defines() {
    let mut sent = BTreeSet::new();
    for (scenario, mode) in [
        (lb::blocks_scenario(), ModeKind::SharedVip),
        (lb::blocks_scenario(), ModeKind::SharedVipOneArm),
        (lb::blocks_scenario(), ModeKind::OneArm),
        (lb::spaces_scenario(), ModeKind::SharedVip),
    ] {
        sent.extend(exercise(scenario, mode).await);
    }
    for write in [
        "POST /cloudapi/1.0.0/loadBalancer/pools",
        "PUT /cloudapi/1.0.0/loadBalancer/pools/{id}",
        "POST /cloudapi/1.0.0/loadBalancer/virtualServices",
        "POST /cloudapi/1.0.0/edgeGateways/{id}/nat/rules",
        "PUT /cloudapi/1.0.0/edgeGateways/{id}/firewall/rules",
        "PUT /cloudapi/1.0.0/edgeGateways/{id}/firewall/rules/{rule}",
        "POST /cloudapi/1.0.0/firewallGroups",
        "PUT /cloudapi/1.0.0/firewallGroups/{id}",
        "POST /cloudapi/1.0.0/applicationPortProfiles",
        "POST /cloudapi/1.0.0/loadBalancer/healthMonitors",
        "POST /cloudapi/1.0.0/loadBalancer/healthMonitors/assignments",
        "DELETE /cloudapi/1.0.0/loadBalancer/healthMonitors/{id}",
    ] {
        assert!(
            sent.contains(write),
            "{write} was not exercised; sent: {sent:#?}"
        );
    }
}

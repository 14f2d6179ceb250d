//! Drift repair through the real service controller: a virtual service
//! deleted by hand in VCD, a pool whose members were changed by hand, and a
//! virtual service's and a DNAT rule's ports edited by hand are written
//! back at the next drift check, each with a Warning Event naming what was
//! repaired; a check that finds nothing changed makes no Event and no write.

use std::time::Duration;

use crate::support::CLUSTER;
use crate::support::cluster::{Cluster, ServiceControllerConfig, fast_config, lb_service};
use crate::support::faults::assert_fired;
use crate::support::poll::holds_across;
use crate::support::{lb, vcd};
use vcdsim::{FaultAction, FaultRule};

fn repairs(cluster: &Cluster) -> f64 {
    vcd::metric_sum(&cluster.registry, "vcd_ccm_drift_repairs_total", &[])
}

fn checks(cluster: &Cluster) -> u64 {
    vcd::metric_sum(&cluster.registry, "vcd_ccm_drift_checks_total", &[]) as u64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_changed_or_deleted_by_hand_are_repaired_with_an_event() {
    let config = ServiceControllerConfig {
        drift_period: Some(Duration::from_millis(500)),
        ..fast_config()
    };
    let cluster = Cluster::start_with(config, |_| {}).await;
    cluster.add_node("worker-0", "10.0.1.10").await;
    let uid = cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    let ip = cluster.wait_for_ip("default", "web").await;
    let tagged = format!(" uid={uid}");

    // Checks that find nothing changed stay silent and write nothing: three
    // of them, so the syncs the first two queued have run too.
    cluster.vcd.reset_log();
    holds_across(
        "nothing written",
        3,
        || checks(&cluster),
        || {
            let quiet = lb::calls(&cluster.vcd).1 == 0;
            if !quiet {
                eprintln!("written:\n{}", lb::write_lines(&cluster.vcd));
            }
            quiet
        },
    )
    .await;
    assert_eq!(
        lb::calls(&cluster.vcd).1,
        0,
        "{}",
        lb::call_lines(&cluster.vcd)
    );
    let reasons: Vec<String> = cluster
        .events("default", "web")
        .await
        .into_iter()
        .map(|(reason, _)| reason)
        .collect();
    assert!(
        !reasons.contains(&"LoadBalancerRepaired".to_string()),
        "{reasons:?}"
    );

    // A virtual service deleted by hand comes back at the same address.
    cluster.vcd.with_world(|w| {
        w.virtual_services
            .retain(|vs| !vs.description.as_deref().unwrap_or("").contains(&tagged))
    });
    let message = cluster
        .wait_for_event("default", "web", "LoadBalancerRepaired")
        .await;
    assert!(message.contains("created virtual service"), "{message}");
    let addresses: Vec<String> = lb::objects_of(&cluster.vcd, &uid)
        .into_iter()
        .filter(|o| o.kind == "virtual service")
        .map(|o| o.address)
        .collect();
    assert_eq!(addresses, vec![ip]);

    // The IP set its pool takes members from, emptied by hand, gets its
    // member back.
    cluster.vcd.with_world(|w| {
        let groups: Vec<String> = w
            .pools
            .iter()
            .filter(|p| p.description.as_deref().unwrap_or("").contains(&tagged))
            .filter_map(|p| Some(p.member_group_ref.as_ref()?.id.clone()))
            .collect();
        assert!(!groups.is_empty(), "pools take members from an IP set");
        for group in w
            .firewall_groups
            .iter_mut()
            .filter(|g| groups.contains(g.body.id.as_ref().unwrap()))
        {
            group.body.ip_addresses = Some(Vec::new());
        }
    });
    crate::support::cluster::wait_for("the pool's member back", || async {
        (cluster.pool_members(&uid) == vec![vec!["10.0.1.10".to_string()]]).then_some(())
    })
    .await;
    crate::support::cluster::wait_for("two repairs counted", || async {
        (repairs(&cluster) >= 2.0).then_some(())
    })
    .await;
}

/// What the gateway's lists show of an object besides its description: a
/// virtual service's port and a DNAT rule's port edited by hand (the
/// description, and so the recorded spec, left alone) are put back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_edits_the_description_does_not_show_are_repaired() {
    let config = ServiceControllerConfig {
        drift_period: Some(Duration::from_millis(300)),
        ..fast_config()
    };
    let cluster = Cluster::start_with(config, |c| {
        c.lb_config = lb::config(CLUSTER, lb::ModeKind::SharedVipOneArm);
    })
    .await;
    cluster.add_node("worker-0", "10.0.1.10").await;
    let uid = cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "web").await;
    let tagged = format!(" uid={uid}");
    let ours =
        |description: &Option<String>| description.as_deref().unwrap_or("").contains(&tagged);
    cluster.vcd.with_world(|w| {
        for vs in w
            .virtual_services
            .iter_mut()
            .filter(|vs| ours(&vs.description))
        {
            vs.service_ports[0].port_start = 8080;
            vs.service_ports[0].port_end = Some(8080);
        }
        for rule in w.nat_rules.iter_mut().filter(|r| ours(&r.body.description)) {
            rule.body.dnat_external_port = Some("8443".into());
        }
    });
    let message = cluster
        .wait_for_event("default", "web", "LoadBalancerRepaired")
        .await;
    assert!(message.contains("virtual service"), "{message}");
    crate::support::cluster::wait_for("the listen port and the DNAT port back", || async {
        let ports = cluster.vcd.with_world(|w| {
            let vs: Vec<u32> = w
                .virtual_services
                .iter()
                .filter(|vs| ours(&vs.description))
                .map(|vs| vs.service_ports[0].port_start)
                .collect();
            let nat: Vec<Option<String>> = w
                .nat_rules
                .iter()
                .filter(|r| ours(&r.body.description))
                .map(|r| r.body.dnat_external_port.clone())
                .collect();
            (vs, nat)
        });
        (ports == (vec![80], vec![Some("80".to_string())])).then_some(())
    })
    .await;
}

/// A repair whose first write VCD refuses is still a repair: the retry
/// that finishes it reports `LoadBalancerRepaired`, not an ordinary
/// `EnsuredLoadBalancer`, though no later check finds anything left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repair_finished_by_a_retry_is_reported_as_a_repair() {
    // Long enough that the retry (after 200 ms) runs before the next check
    // could mark the Service again.
    let config = ServiceControllerConfig {
        drift_period: Some(Duration::from_secs(3)),
        ..fast_config()
    };
    let cluster = Cluster::start_with(config, |_| {}).await;
    cluster.add_node("worker-0", "10.0.1.10").await;
    let uid = cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "web").await;
    let tagged = format!(" uid={uid}");
    cluster.vcd.add_fault(FaultRule::new(
        Some("POST"),
        "/cloudapi/1.0.0/loadBalancer/virtualServices",
        FaultAction::Error {
            status: 400,
            minor_error_code: "INJECTED_FAULT".into(),
            message: "injected by the test".into(),
        },
    ));
    cluster.vcd.with_world(|w| {
        w.virtual_services
            .retain(|vs| !vs.description.as_deref().unwrap_or("").contains(&tagged))
    });
    cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert_fired(&cluster.vcd, "the repair's first create");
    let message = cluster
        .wait_for_event("default", "web", "LoadBalancerRepaired")
        .await;
    assert!(message.contains("created virtual service"), "{message}");
    assert_eq!(repairs(&cluster), 1.0);
}

//! The IP sets pools take their members from, through the engine: a
//! `Local` Service's set is swept with its Service while the cluster's
//! stays; a set with our name that someone else owns, or that a later
//! vcd-ccm tagged, is never written or deleted.

use std::collections::HashSet;

use vcd_ccm::lb::ServiceSpec;
use vcd_ccm::policy::model::TrafficPolicy;
use vcdsim::Sim;

use crate::support::lb::*;
use crate::support::vcd;

fn local(uid: &str) -> ServiceSpec {
    let mut spec = service("shop", "local", uid, vec![tcp(80, 30080)]);
    spec.external_traffic_policy = TrafficPolicy::Local;
    spec
}

fn cluster_wide(uid: &str) -> ServiceSpec {
    service("shop", "web", uid, vec![tcp(80, 30081)])
}

/// Name and entries of every member set.
fn sets(sim: &Sim) -> Vec<(String, String)> {
    member_sets(sim)
        .into_iter()
        .map(|o| (o.name, o.address))
        .collect()
}

#[tokio::test]
async fn a_local_services_set_is_swept_with_it_and_the_clusters_stays() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    lb.ensure(&cluster_wide("uid-web"), &nodes(3))
        .await
        .unwrap();
    lb.ensure(&local("uid-local"), &nodes(1)).await.unwrap();
    let before = sets(&sim);
    assert_eq!(before.len(), 2, "{before:?}");
    assert!(
        before
            .iter()
            .any(|(n, ips)| n.starts_with("ingress-nodes-cluster-") && ips.split(',').count() == 3)
    );
    assert!(
        before
            .iter()
            .any(|(n, ips)| n.starts_with("ingress-nodes-shop.local-") && ips == "10.0.0.11")
    );

    let live: HashSet<String> = ["uid-web".to_string()].into();
    let report = lb.sweep(&live).await.unwrap();
    assert_eq!(report.services, vec!["shop/local (uid-local)".to_string()]);
    let after = sets(&sim);
    assert_eq!(after.len(), 1, "{after:?}");
    assert!(after[0].0.starts_with("ingress-nodes-cluster-"));
    assert!(objects_of(&sim, "uid-local").is_empty());
    assert_eq!(lb.sweep(&live).await.unwrap(), Default::default());
}

#[tokio::test]
async fn a_set_with_our_name_owned_by_someone_else_is_never_written() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    lb.ensure(&cluster_wide("uid-web"), &nodes(2))
        .await
        .unwrap();
    sim.with_world(|w| {
        for set in &mut w.firewall_groups {
            set.body.description = Some("the network team's".into());
        }
    });
    let before = sets(&sim);
    let restarted = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    sim.reset_log();
    let error = restarted
        .ensure(&cluster_wide("uid-web"), &nodes(3))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("IP set 'ingress-nodes-cluster-") && error.contains("is not ours"),
        "{error}"
    );
    assert_eq!(calls(&sim).1, 0, "written:\n{}", call_lines(&sim));
    assert_eq!(sets(&sim), before);
}

#[tokio::test]
async fn a_later_versions_set_is_neither_written_nor_swept() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    lb.ensure(&local("uid-local"), &nodes(1)).await.unwrap();
    tag_in_a_later_format(&sim, "uid-local");
    let before = sets(&sim);
    let restarted = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    sim.reset_log();
    let error = restarted
        .ensure(&local("uid-local"), &nodes(2))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("tag of format 99"), "{error}");
    let report = restarted.sweep(&HashSet::new()).await.unwrap();
    assert_eq!(report.newer_format.get("ip_set"), Some(&1), "{report:?}");
    assert_eq!(calls(&sim).1, 0, "written:\n{}", call_lines(&sim));
    assert_eq!(sets(&sim), before);
}

#[tokio::test]
async fn a_drain_over_100_nodes_is_refused_before_any_write() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let mut svc = cluster_wide("uid-drain");
    svc.annotations
        .insert("vcd-ccm.io/drain-period".into(), "30s".into());
    // 100 Nodes are listed in the pool, each one a member it can disable.
    lb.ensure(&svc, &nodes(100)).await.unwrap();
    let written = sim.requests().len();
    let error = lb.ensure(&svc, &nodes(101)).await.unwrap_err().to_string();
    assert!(
        error.contains("at most 100")
            && error.contains("101 Nodes")
            && error.contains("drop the drain period")
            && error.contains("node.kubernetes.io/exclude-from-external-load-balancers"),
        "{error}"
    );
    let writes: Vec<String> = sim.requests()[written..]
        .iter()
        .filter(|r| r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.template))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert!(sets(&sim).is_empty(), "no member set for a drained Service");
}

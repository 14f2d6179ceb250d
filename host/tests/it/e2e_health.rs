//! Health in the Service through the service controller: VCD's count of
//! members up becomes the `vcd-ccm.io/LoadBalancerHealthy` condition and
//! gauges; going down gives one Warning, coming back one Normal Event,
//! however many reads see the same state; a steady read is one list of
//! pool summaries and writes nothing, in VCD or on the Service.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use vcd_ccm::controllers::service::{HEALTHY_CONDITION, condition_of};

use crate::support::cluster::{
    Cluster, ServiceControllerConfig, fast_config, lb_service, wait_for,
};
use crate::support::objects::ServiceEdits;
use crate::support::vcd;

const SUMMARIES: &str = "/loadBalancer/poolSummaries";

async fn wait_for_health(cluster: &Cluster, status: &str, message: &str) -> Condition {
    wait_for(
        &format!("{HEALTHY_CONDITION} {status}: {message}"),
        || async {
            let service = cluster.service("default", "web").await?;
            let found = condition_of(&service, HEALTHY_CONDITION)?.clone();
            (found.status == status && found.message == message).then_some(found)
        },
    )
    .await
}

/// Health reads so far: lists of the gateway's pool summaries.
fn reads(cluster: &Cluster) -> usize {
    cluster
        .vcd
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.template.ends_with(SUMMARIES))
        .count()
}

/// Waits until `more` health reads have happened after now.
async fn after_reads(cluster: &Cluster, more: usize) {
    let from = reads(cluster);
    wait_for(&format!("{more} more health reads"), || async {
        (reads(cluster) >= from + more).then_some(())
    })
    .await;
}

fn events_of(events: &[(String, String)], reason: &str) -> usize {
    events.iter().filter(|(r, _)| r == reason).count()
}

fn set_health(cluster: &Cluster, ip: &str, health: &str) {
    cluster.vcd.with_world(|w| {
        let pool = w.pools[0].id.clone().expect("a pool id");
        w.set_member_health(&pool, ip, health)
            .expect("the member's health is set");
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_up_become_a_condition_gauges_and_one_event_per_transition() {
    let config = ServiceControllerConfig {
        health_period: Some(Duration::from_millis(300)),
        ..fast_config()
    };
    let cluster = Cluster::start_with(config, |_| {}).await;
    cluster.add_node("worker-0", "10.0.1.10").await;
    cluster.add_node("worker-1", "10.0.1.11").await;
    cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "web").await;
    wait_for_health(&cluster, "True", "2 of 2 members up").await;

    // Steady: one list per read, nothing written anywhere.
    after_reads(&cluster, 1).await;
    cluster.vcd.reset_log();
    let patches_before = cluster
        .kube
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH")
        .count();
    after_reads(&cluster, 3).await;
    let calls: Vec<String> = cluster
        .vcd
        .requests()
        .iter()
        .filter(|r| !r.template.contains("/sessions") && !r.template.contains("/oauth/"))
        .map(|r| format!("{} {}", r.method, r.template))
        .collect();
    assert!(
        calls
            .iter()
            .all(|c| c.starts_with("GET ") && c.ends_with(SUMMARIES)),
        "{calls:#?}"
    );
    let patches = cluster
        .kube
        .requests()
        .iter()
        .filter(|r| r.method == "PATCH")
        .count();
    assert_eq!(
        patches, patches_before,
        "no Service write while nothing changes"
    );

    // Down: False with the count, one Warning however many reads see it.
    set_health(&cluster, "10.0.1.10", "DOWN");
    set_health(&cluster, "10.0.1.11", "DOWN");
    let down = wait_for_health(&cluster, "False", "0 of 2 members up").await;
    assert_eq!(down.reason, "LoadBalancerUnhealthy");
    after_reads(&cluster, 3).await;
    let events = cluster.events("default", "web").await;
    assert_eq!(events_of(&events, "LoadBalancerUnhealthy"), 1, "{events:?}");
    let labels = ["namespace=\"default\"", "service=\"web\""];
    let gauge = |name: &str| vcd::metric_sum(&cluster.registry, name, &labels);
    assert_eq!(gauge("vcd_ccm_load_balancer_healthy"), 0.0);
    assert_eq!(gauge("vcd_ccm_load_balancer_members_enabled"), 2.0);

    // Back: True again, one Normal Event.
    set_health(&cluster, "10.0.1.11", "UP");
    wait_for_health(&cluster, "True", "1 of 2 members up").await;
    after_reads(&cluster, 2).await;
    let events = cluster.events("default", "web").await;
    assert_eq!(events_of(&events, "LoadBalancerHealthy"), 1, "{events:?}");
    assert_eq!(events_of(&events, "LoadBalancerUnhealthy"), 1, "{events:?}");
    assert_eq!(gauge("vcd_ccm_load_balancer_healthy"), 1.0);
    assert_eq!(gauge("vcd_ccm_load_balancer_members_up"), 1.0);

    // Gone: the condition and the gauges go with the load balancer.
    cluster.delete_service("default", "web").await;
    wait_for("web gone", || async {
        cluster
            .service("default", "web")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    after_reads(&cluster, 2).await;
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &cluster.registry).unwrap();
    assert!(!text.contains("service=\"web\""), "{text}");
}

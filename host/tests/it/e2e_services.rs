//! The service controller end to end: kubesim, the real controller and load
//! balancer, vcdsim.

use crate::support::cluster::{CLUSTER, Cluster, fast_config, lb_service, wait_for};
use crate::support::lb;
use crate::support::objects::ServiceEdits;
use serde_json::json;
use vcd_ccm::controllers::service::CLEANUP_FINALIZER;
use vcd_ccm::controllers::service::ServiceControllerConfig;

const SSL_PORTS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-ports";
const CERT_ALIAS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias";

fn finalizers(service: &k8s_openapi::api::core::v1::Service) -> Vec<String> {
    service.metadata.finalizers.clone().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_lives_through_its_whole_lifecycle() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.add_node("worker-1", "10.0.0.12").await;
    let mut body = lb_service("web", &[(80, 30080), (443, 30443)]);
    body["metadata"]["annotations"] = json!({SSL_PORTS: "443", CERT_ALIAS: "my-cert"});
    let uid = cluster.create_service("default", body).await;

    let ip = cluster.wait_for_ip("default", "web").await;
    let service = cluster.service("default", "web").await.unwrap();
    assert_eq!(finalizers(&service), [CLEANUP_FINALIZER]);
    let ingress = &service
        .status
        .unwrap()
        .load_balancer
        .unwrap()
        .ingress
        .unwrap()[0];
    assert_eq!(ingress.ip_mode.as_deref(), Some("Proxy"));
    assert!(ip.starts_with("203.0.113."), "{ip}");
    // The controller's node cache may lag the two Nodes just created (an
    // UnAvailableLoadBalancer Event then, and a node update after).
    let reasons: Vec<String> = cluster
        .events("default", "web")
        .await
        .into_iter()
        .map(|e| e.0)
        .filter(|r| r != "UnAvailableLoadBalancer")
        .collect();
    assert_eq!(
        reasons[..2],
        ["EnsuringLoadBalancer", "EnsuredLoadBalancer"],
        "{reasons:?}"
    );
    let both = vec![vec!["10.0.0.11".to_string(), "10.0.0.12".to_string()]; 2];
    wait_for("both nodes in both pools", || async {
        (cluster.pool_members(&uid) == both).then_some(())
    })
    .await;
    let https = cluster.vcd.with_world(|w| {
        w.virtual_services
            .iter()
            .find(|vs| vs.name.ends_with("-tcp-443"))
            .map(|vs| vs.certificate_ref.is_some())
    });
    assert_eq!(https, Some(true), "port 443 terminates TLS with my-cert");

    // A new port gets its own pool and virtual service at the same address.
    cluster
        .patch_service(
            "default",
            "web",
            json!({"spec": {"ports": [
                {"name": "p80", "port": 80, "protocol": "TCP", "nodePort": 30080},
                {"name": "p443", "port": 443, "protocol": "TCP", "nodePort": 30443},
                {"name": "p8080", "port": 8080, "protocol": "TCP", "nodePort": 30808}
            ]}}),
        )
        .await;
    wait_for("three pools", || async {
        (cluster.pool_members(&uid).len() == 3).then_some(())
    })
    .await;
    assert_eq!(cluster.wait_for_ip("default", "web").await, ip);

    // Nodes come and go: every pool follows.
    cluster.add_node("worker-2", "10.0.0.13").await;
    wait_for("worker-2 in every pool", || async {
        cluster
            .pool_members(&uid)
            .iter()
            .all(|m| m.contains(&"10.0.0.13".to_string()))
            .then_some(())
    })
    .await;
    cluster
        .wait_for_event("default", "web", "UpdatedLoadBalancer")
        .await;
    cluster.delete_node("worker-0").await;
    wait_for("worker-0 out of every pool", || async {
        cluster
            .pool_members(&uid)
            .iter()
            .all(|m| m == &["10.0.0.12", "10.0.0.13"])
            .then_some(())
    })
    .await;

    // An annotation change reaches the existing virtual service.
    cluster
        .patch_service(
            "default",
            "web",
            json!({"metadata": {"annotations": {SSL_PORTS: null}}}),
        )
        .await;
    wait_for("port 443 without TLS", || async {
        cluster.vcd.with_world(|w| {
            w.virtual_services
                .iter()
                .any(|vs| vs.name.ends_with("-tcp-443") && vs.certificate_ref.is_none())
                .then_some(())
        })
    })
    .await;

    // LoadBalancer → ClusterIP: VCD is clean, the finalizer and ingress gone.
    cluster
        .patch_service("default", "web", json!({"spec": {"type": "ClusterIP"}}))
        .await;
    wait_for("the Service released", || async {
        let service = cluster.service("default", "web").await?;
        let released = finalizers(&service).is_empty()
            && service
                .status
                .and_then(|s| s.load_balancer)
                .and_then(|l| l.ingress)
                .unwrap_or_default()
                .is_empty();
        released.then_some(())
    })
    .await;
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
    cluster
        .wait_for_event("default", "web", "DeletedLoadBalancer")
        .await;

    // Back to LoadBalancer, then deleted: the finalizer holds it until VCD is clean.
    cluster
        .patch_service("default", "web", json!({"spec": {"type": "LoadBalancer"}}))
        .await;
    cluster.wait_for_ip("default", "web").await;
    cluster.delete_service("default", "web").await;
    cluster.wait_for_gone("default", "web").await;
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());
    assert!(lb::objects_of_cluster(&cluster.vcd, CLUSTER).is_empty());

    let metrics = cluster.metrics_text();
    for line in [
        "service_controller_loadbalancer_sync_total ",
        "vcd_ccm_service_reconcile_duration_seconds_count{operation=\"ensure\",outcome=\"success\"} ",
        "vcd_ccm_service_reconcile_duration_seconds_count{operation=\"update\",outcome=\"success\"} ",
        "vcd_ccm_service_reconcile_duration_seconds_count{operation=\"delete\",outcome=\"success\"} ",
        "workqueue_adds_total{name=\"service\"} ",
    ] {
        let value = metrics
            .lines()
            .find_map(|l| l.strip_prefix(line))
            .unwrap_or_else(|| panic!("{line} missing:\n{metrics}"));
        assert!(value.parse::<f64>().unwrap() >= 1.0, "{line}{value}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_classes_are_left_alone_and_ours_is_served() {
    let config = ServiceControllerConfig {
        classes: vcd_ccm::controllers::service::ClassFilter::new(
            ["vcd-ccm.io/alb".to_string()],
            true,
        ),
        ..fast_config()
    };
    let cluster = Cluster::start_with(config, |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut other = lb_service("other", &[(80, 30081)]);
    other["spec"]["loadBalancerClass"] = json!("example.com/elsewhere");
    cluster.create_service("default", other).await;
    let mut ours = lb_service("ours", &[(80, 30082)]);
    ours["spec"]["loadBalancerClass"] = json!("vcd-ccm.io/alb");
    cluster.create_service("default", ours).await;
    cluster.wait_for_ip("default", "ours").await;
    let other = cluster.service("default", "other").await.unwrap();
    assert!(finalizers(&other).is_empty());
    assert!(cluster.events("default", "other").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_service_reports_why_changes_nothing_and_recovers_when_fixed() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("tls", &[(443, 30443)]);
    body["metadata"]["annotations"] = json!({SSL_PORTS: "443", CERT_ALIAS: "missing-cert"});
    let uid = cluster.create_service("default", body).await;
    let message = cluster
        .wait_for_event("default", "tls", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.starts_with("Error syncing load balancer: failed to ensure load balancer: "),
        "{message}"
    );
    assert!(
        message.contains("missing-cert"),
        "names the alias: {message}"
    );
    let service = cluster.service("default", "tls").await.unwrap();
    assert_eq!(
        finalizers(&service),
        [CLEANUP_FINALIZER],
        "added before the attempt"
    );
    assert!(lb::objects_of(&cluster.vcd, &uid).is_empty());

    cluster
        .patch_service(
            "default",
            "tls",
            json!({"metadata": {"annotations": {CERT_ALIAS: "my-cert"}}}),
        )
        .await;
    cluster.wait_for_ip("default", "tls").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excluded_and_departing_nodes_get_no_traffic() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.add_node("worker-1", "10.0.0.12").await;
    let uid = cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "web").await;
    cluster
        .nodes()
        .patch(
            "worker-1",
            &Default::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"labels": {
                "node.kubernetes.io/exclude-from-external-load-balancers": "true"
            }}})),
        )
        .await
        .unwrap();
    wait_for("worker-1 excluded", || async {
        (cluster.pool_members(&uid) == [["10.0.0.11"]]).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_sweeps_objects_of_services_deleted_while_down() {
    let mut cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let uid = cluster
        .create_service("default", lb_service("gone", &[(80, 30080)]))
        .await;
    cluster.wait_for_ip("default", "gone").await;
    // Down: the Service goes away without the controller (finalizer forced off).
    cluster.controller_stop();
    cluster
        .services("default")
        .patch_status(
            "gone",
            &Default::default(),
            &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    cluster.delete_service("default", "gone").await;
    assert!(!lb::objects_of(&cluster.vcd, &uid).is_empty());
    cluster.start_controller(fast_config()).await;
    assert!(
        lb::objects_of(&cluster.vcd, &uid).is_empty(),
        "swept before the caches count as synced"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_warnings_become_events() {
    let cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("passthrough", &[(443, 30443)]);
    body["metadata"]["annotations"] = json!({
        SSL_PORTS: "443",
        "service.beta.kubernetes.io/vcloud-avi-ssl-no-termination": "true"
    });
    cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "passthrough").await;
    let message = cluster
        .wait_for_event("default", "passthrough", "LoadBalancerPolicyWarning")
        .await;
    assert!(message.contains("ssl-no-termination"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_cluster_with_this_clusterid_is_reported_on_the_lease_and_left_alone() {
    let mut cluster = Cluster::start().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    // A second Kubernetes cluster installed from a copy of this cloud config.
    let twin =
        lb::other_cluster_engine(&cluster.vcd, lb::config(CLUSTER, lb::ModeKind::SharedVip)).await;
    let theirs = lb::web_service("default", "web", "uid-of-the-twin");
    twin.ensure(&theirs, &lb::nodes(1)).await.unwrap();
    let before = lb::objects_of(&cluster.vcd, "uid-of-the-twin");

    cluster.start_controller(fast_config()).await;
    let message = cluster
        .wait_for_event("kube-system", "cloud-controller-manager", "ClusterIdShared")
        .await;
    assert!(message.contains(lb::OTHER_KUBE_SYSTEM_UID), "{message}");
    assert_eq!(lb::objects_of(&cluster.vcd, "uid-of-the-twin"), before);
    let metrics = cluster.metrics_text();
    assert!(
        metrics.contains("vcd_ccm_sweep_left_alone{reason=\"other_cluster\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_versions_objects_are_counted_by_kind_and_left_alone() {
    let mut cluster = Cluster::start().await;
    // What a later version left of a Service this cluster no longer has.
    let later = lb::engine(&cluster.vcd, lb::config(CLUSTER, lb::ModeKind::SharedVip)).await;
    let theirs = lb::web_service("default", "web", "uid-of-a-later-version");
    later.ensure(&theirs, &lb::nodes(1)).await.unwrap();
    lb::tag_in_a_later_format(&cluster.vcd, "uid-of-a-later-version");
    let before = lb::objects_of(&cluster.vcd, "uid-of-a-later-version");

    cluster.start_controller(fast_config()).await;
    let metrics = wait_for("the sweep's count of newer-format objects", || async {
        let metrics = cluster.metrics_text();
        metrics
            .contains("vcd_ccm_newer_format_objects{kind=\"virtual_service\"} 2")
            .then_some(metrics)
    })
    .await;
    for expected in [
        "vcd_ccm_newer_format_objects{kind=\"pool\"} 2",
        "vcd_ccm_newer_format_objects{kind=\"nat_rule\"} 0",
        "vcd_ccm_newer_format_objects{kind=\"ip_space_allocation\"} 0",
    ] {
        assert!(metrics.contains(expected), "{expected}: {metrics}");
    }
    assert_eq!(
        lb::objects_of(&cluster.vcd, "uid-of-a-later-version"),
        before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ip_space_allocation_is_noted_on_the_service_before_it_is_made() {
    let cluster = Cluster::start_on(lb::spaces_scenario(), fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    let ip = cluster.wait_for_ip("default", "web").await;
    let service = cluster
        .service("default", "web")
        .await
        .expect("the Service");
    let noted = service
        .metadata
        .annotations
        .unwrap_or_default()
        .remove(vcd_ccm::lb::journal::ANNOTATION)
        .expect("the allocation was noted");
    assert!(
        noted.starts_with("urn:vcloud:ipSpace:") && noted.ends_with(&format!(" {ip}")),
        "{noted}"
    );
}

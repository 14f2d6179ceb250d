use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSpec, ServicePort, ServiceSpec, Taint};
use serde_json::json;

use super::*;

fn service(value: serde_json::Value) -> Service {
    serde_json::from_value(value).expect("a Service")
}

fn lb() -> Service {
    service(json!({
        "metadata": {"name": "web", "namespace": "default", "uid": "u1"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080}]}
    }))
}

fn node(labels: &[(&str, &str)], taints: &[&str]) -> Node {
    let mut node = Node::default();
    node.metadata.name = Some("n1".into());
    node.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    );
    node.spec = Some(NodeSpec {
        taints: Some(
            taints
                .iter()
                .map(|key| Taint {
                    key: key.to_string(),
                    effect: "NoSchedule".into(),
                    ..Taint::default()
                })
                .collect(),
        ),
        ..NodeSpec::default()
    });
    node
}

#[test]
fn only_unclassed_or_own_class_load_balancers_are_wanted() {
    let mut classed = lb();
    classed.spec.as_mut().unwrap().load_balancer_class = Some("example.com/other".into());
    let none = ClassFilter::default();
    let ours = ClassFilter::new(["example.com/other".to_string()], true);
    assert!(none.wants_load_balancer(&lb()));
    assert!(!none.wants_load_balancer(&classed));
    assert!(ours.wants_load_balancer(&classed));
    let only_classes = ClassFilter::new(
        ["example.com/a".to_string(), "example.com/other".to_string()],
        false,
    );
    assert!(only_classes.wants_load_balancer(&classed));
    assert!(!only_classes.wants_load_balancer(&lb()));
    assert_eq!(
        only_classes.describe(),
        r#""example.com/a", "example.com/other""#
    );
    let mut cluster_ip = lb();
    cluster_ip.spec.as_mut().unwrap().type_ = Some("ClusterIP".into());
    assert!(!none.wants_load_balancer(&cluster_ip));
}

#[test]
fn re_ensure_follows_upstream_needs_update() {
    let filter = ClassFilter::default();
    let base = lb();
    let changed = |edit: &dyn Fn(&mut Service)| {
        let mut new = base.clone();
        edit(&mut new);
        filter.needs_update(&base, &new)
    };
    fn spec(s: &mut Service) -> &mut ServiceSpec {
        s.spec.as_mut().unwrap()
    }
    assert!(!changed(&|_| {}));
    assert!(changed(&|s| spec(s).type_ = Some("ClusterIP".into())));
    assert!(changed(
        &|s| spec(s).ports.as_mut().unwrap()[0].node_port = Some(30081)
    ));
    assert!(changed(&|s| spec(s).ports.as_mut().unwrap().push(
        ServicePort {
            port: 443,
            ..ServicePort::default()
        }
    )));
    assert!(changed(
        &|s| spec(s).load_balancer_ip = Some("203.0.113.20".into())
    ));
    assert!(changed(&|s| {
        s.metadata.annotations = Some([("a".to_string(), "b".to_string())].into())
    }));
    assert!(changed(&|s| s.metadata.uid = Some("u2".into())));
    assert!(changed(
        &|s| spec(s).external_traffic_policy = Some("Local".into())
    ));
    assert!(changed(&|s| spec(s).ip_families = Some(vec!["IPv4".into()])));
    // Not relevant to the load balancer:
    assert!(!changed(&|s| {
        s.metadata.labels = Some([("a".to_string(), "b".to_string())].into())
    }));
    assert!(!changed(
        &|s| s.metadata.finalizers = Some(vec![CLEANUP_FINALIZER.into()])
    ));
    assert!(!changed(
        &|s| spec(s).selector = Some([("app".to_string(), "x".to_string())].into())
    ));
    assert!(!changed(
        &|s| spec(s).internal_traffic_policy = Some("Local".into())
    ));
}

#[test]
fn cleanup_needs_the_finalizer_and_a_reason() {
    let mut with_finalizer = lb();
    with_finalizer.metadata.finalizers = Some(vec![CLEANUP_FINALIZER.into()]);
    assert!(!needs_cleanup(&lb()));
    assert!(!needs_cleanup(&with_finalizer));
    let mut retyped = with_finalizer.clone();
    retyped.spec.as_mut().unwrap().type_ = Some("ClusterIP".into());
    assert!(needs_cleanup(&retyped));
    let mut deleting = with_finalizer;
    deleting.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::now()),
    );
    assert!(needs_cleanup(&deleting));
}

#[test]
fn node_set_uses_parse_bool_exclusion_and_the_autoscaler_taint() {
    let cases = [
        (vec![], vec![], true),
        (vec![(EXCLUDE_LABEL, "true")], vec![], false),
        (vec![(EXCLUDE_LABEL, "")], vec![], false),
        (vec![(EXCLUDE_LABEL, "yes")], vec![], false),
        (vec![(EXCLUDE_LABEL, "false")], vec![], true),
        (vec![(EXCLUDE_LABEL, "0")], vec![], true),
        (vec![], vec![TO_BE_DELETED_TAINT], false),
        (vec![], vec!["node.kubernetes.io/not-ready"], true),
    ];
    for (labels, taints, expected) in cases {
        assert_eq!(
            in_node_set(&node(&labels, &taints)),
            expected,
            "{labels:?} {taints:?}"
        );
    }
    let mut deleting = node(&[], &[]);
    deleting.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::now()),
    );
    assert!(!in_node_set(&deleting));
}

#[test]
fn node_updates_sync_on_inclusion_provider_id_and_address() {
    let old = node(&[], &[]);
    let mut excluded = old.clone();
    excluded.metadata.labels = Some([(EXCLUDE_LABEL.to_string(), "true".to_string())].into());
    assert!(should_sync_updated_node(&old, &excluded));
    let mut with_id = old.clone();
    with_id.spec.as_mut().unwrap().provider_id = Some("vmware-cloud-director://x".into());
    assert!(should_sync_updated_node(&old, &with_id));
    let mut readiness_only = old.clone();
    readiness_only.spec.as_mut().unwrap().taints = Some(vec![Taint {
        key: TO_BE_DELETED_TAINT.into(),
        effect: "NoSchedule".into(),
        ..Taint::default()
    }]);
    assert!(!should_sync_updated_node(&old, &readiness_only));
    let addressed: Node = serde_json::from_value(json!({
        "metadata": {"name": "n1"},
        "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.11"}]}
    }))
    .unwrap();
    assert!(should_sync_updated_node(&old, &addressed));
    let mut labelled = old.clone();
    labelled.metadata.labels = Some([("role".to_string(), "ingress".to_string())].into());
    assert!(should_sync_updated_node(&old, &labelled));
}

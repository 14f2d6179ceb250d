//! Service validation and allocation, as the CCM observes it.

use crate::common::{api_error, service, start, typed};
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

fn node_ports(svc: &Service) -> Vec<i32> {
    svc.spec
        .as_ref()
        .unwrap()
        .ports
        .as_ref()
        .unwrap()
        .iter()
        .filter_map(|p| p.node_port)
        .collect()
}

#[tokio::test]
async fn load_balancers_get_a_cluster_ip_and_node_ports() {
    let (_sim, client) = start().await;
    let api = Api::<Service>::default_namespaced(client);
    let lb = api
        .create(&PostParams::default(), &service("lb", "LoadBalancer"))
        .await
        .unwrap();
    let spec = lb.spec.as_ref().unwrap();
    let ip: std::net::Ipv4Addr = spec.cluster_ip.as_deref().unwrap().parse().unwrap();
    assert_eq!(ip.octets()[..2], [10, 96]);
    assert_ne!(
        ip.to_string(),
        "10.96.0.1",
        "the kubernetes Service holds .1"
    );
    assert_eq!(spec.allocate_load_balancer_node_ports, Some(true));
    assert_eq!(spec.external_traffic_policy.as_deref(), Some("Cluster"));
    let ports = node_ports(&lb);
    assert_eq!(ports.len(), 1);
    assert!((30000..=32767).contains(&ports[0]));

    let np = api
        .create(&PostParams::default(), &service("np", "NodePort"))
        .await
        .unwrap();
    assert_ne!(node_ports(&np), ports, "node ports are unique");
    let cip = api
        .create(&PostParams::default(), &service("cip", "ClusterIP"))
        .await
        .unwrap();
    assert!(node_ports(&cip).is_empty());

    let local: Service = typed(json!({
        "metadata": {"name": "local"},
        "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "ports": [{"port": 80}]}
    }));
    let local = api.create(&PostParams::default(), &local).await.unwrap();
    assert!(local.spec.unwrap().health_check_node_port.is_some());
}

#[tokio::test]
async fn requested_node_ports_are_checked() {
    let (_sim, client) = start().await;
    let api = Api::<Service>::default_namespaced(client);
    let with_port = |name: &str, port: i32| -> Service {
        typed(
            json!({"metadata": {"name": name}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": port}]}}),
        )
    };
    let first = api
        .create(&PostParams::default(), &with_port("a", 31000))
        .await
        .unwrap();
    assert_eq!(node_ports(&first), [31000]);
    assert_eq!(
        api_error(
            api.create(&PostParams::default(), &with_port("b", 31000))
                .await
        ),
        (422, "Invalid".into())
    );
    assert_eq!(
        api_error(
            api.create(&PostParams::default(), &with_port("c", 80))
                .await
        )
        .0,
        422
    );
}

#[tokio::test]
async fn invalid_specs_and_immutable_fields_are_rejected() {
    let (_sim, client) = start().await;
    let api = Api::<Service>::default_namespaced(client);
    let bad_type: Service = typed(
        json!({"metadata": {"name": "a"}, "spec": {"type": "Magic", "ports": [{"port": 80}]}}),
    );
    assert_eq!(
        api_error(api.create(&PostParams::default(), &bad_type).await).0,
        422
    );
    let bad_port: Service =
        typed(json!({"metadata": {"name": "b"}, "spec": {"ports": [{"port": 70000}]}}));
    assert_eq!(
        api_error(api.create(&PostParams::default(), &bad_port).await).0,
        422
    );
    let no_ports: Service = typed(json!({"metadata": {"name": "c"}, "spec": {}}));
    assert_eq!(
        api_error(api.create(&PostParams::default(), &no_ports).await).0,
        422
    );

    api.create(&PostParams::default(), &service("lb", "LoadBalancer"))
        .await
        .unwrap();
    let move_ip =
        Patch::Merge(json!({"spec": {"clusterIP": "10.96.5.5", "clusterIPs": ["10.96.5.5"]}}));
    assert_eq!(
        api_error(api.patch("lb", &PatchParams::default(), &move_ip).await),
        (422, "Invalid".into())
    );

    let classed: Service = typed(json!({
        "metadata": {"name": "classed"},
        "spec": {"type": "LoadBalancer", "loadBalancerClass": "example.com/lb", "ports": [{"port": 80}]}
    }));
    api.create(&PostParams::default(), &classed).await.unwrap();
    let reclass = Patch::Merge(json!({"spec": {"loadBalancerClass": "vcd"}}));
    assert_eq!(
        api_error(
            api.patch("classed", &PatchParams::default(), &reclass)
                .await
        )
        .0,
        422
    );
}

#[tokio::test]
async fn type_changes_keep_or_release_node_ports() {
    let (_sim, client) = start().await;
    let api = Api::<Service>::default_namespaced(client);
    let lb = api
        .create(&PostParams::default(), &service("lb", "LoadBalancer"))
        .await
        .unwrap();
    let allocated = node_ports(&lb);
    // A client that replaces ports without nodePort keeps the allocation.
    let ports = Patch::Merge(json!({"spec": {"ports": [{"name": "http", "port": 80}]}}));
    let patched = api
        .patch("lb", &PatchParams::default(), &ports)
        .await
        .unwrap();
    assert_eq!(node_ports(&patched), allocated);
    let to_cluster_ip = Patch::Merge(json!({"spec": {"type": "ClusterIP"}}));
    let patched = api
        .patch("lb", &PatchParams::default(), &to_cluster_ip)
        .await
        .unwrap();
    assert!(node_ports(&patched).is_empty());
    assert_eq!(
        patched.spec.unwrap().cluster_ip,
        lb.spec.unwrap().cluster_ip
    );
}

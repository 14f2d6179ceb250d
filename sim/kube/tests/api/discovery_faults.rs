//! Discovery documents and the fault hooks.

use crate::common::{api_error, service, start, typed};
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{Api, PostParams};
use kube::discovery::{Discovery, Scope, verbs};
use kubesim::{WriteFault, WriteVerb};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test]
async fn discovery_lists_every_served_resource() {
    let (sim, client) = start().await;
    let discovery = Discovery::new(client.clone()).run().await.unwrap();
    let mut found = Vec::new();
    for group in discovery.groups() {
        for (resource, capabilities) in group.recommended_resources() {
            assert!(capabilities.supports_operation(verbs::WATCH));
            found.push((
                resource.group.clone(),
                resource.plural.clone(),
                capabilities.scope == Scope::Namespaced,
            ));
        }
    }
    for expected in [
        ("", "services", true),
        ("", "nodes", false),
        ("", "namespaces", false),
        ("", "configmaps", true),
        ("", "secrets", true),
        ("", "events", true),
        ("coordination.k8s.io", "leases", true),
        ("events.k8s.io", "events", true),
    ] {
        let expected = (expected.0.to_string(), expected.1.to_string(), expected.2);
        assert!(found.contains(&expected), "{expected:?} in {found:?}");
    }
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
    let health = reqwest_free_get(&sim.url(), "/healthz").await;
    assert_eq!(health, "ok");
}

/// A plain GET over TCP, to check the non-API endpoints without another client.
async fn reqwest_free_get(base: &str, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    response
        .rsplit("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn injected_write_failures_hit_only_the_chosen_writes() {
    let (sim, client) = start().await;
    let services = Api::<Service>::default_namespaced(client.clone());
    sim.faults()
        .add_write_fault(WriteFault::new("services", 2, 500).on(WriteVerb::Create));
    services.get("kubernetes").await.unwrap();
    for _ in 0..2 {
        let error = api_error(
            services
                .create(&PostParams::default(), &service("lb", "LoadBalancer"))
                .await,
        );
        assert_eq!(error, (500, "InternalError".into()));
    }
    services
        .create(&PostParams::default(), &service("lb", "LoadBalancer"))
        .await
        .unwrap();

    // kube-rs retries 503 by itself: one injected 503 costs an extra request, not an error.
    sim.faults().fail_writes("configmaps", 1, 503);
    let maps = Api::<ConfigMap>::default_namespaced(client);
    let cm: ConfigMap = typed(json!({"metadata": {"name": "cfg"}}));
    maps.create(&PostParams::default(), &cm).await.unwrap();
    let statuses: Vec<u16> = sim
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [500, 500, 201, 503, 201]);
    assert_eq!(sim.faults().writes_failed(), 3);
    sim.faults().clear();
    assert_eq!(sim.faults().writes_failed(), 0);
}

#[tokio::test]
async fn responses_can_be_delayed() {
    let (sim, client) = start().await;
    let services = Api::<Service>::default_namespaced(client);
    // Long enough that an undelayed read on a loaded machine stays far
    // below it.
    let delay = Duration::from_secs(2);
    sim.faults().set_delay(delay);
    let started = Instant::now();
    services.get("kubernetes").await.unwrap();
    assert!(started.elapsed() >= delay);
    sim.faults().clear();
    let started = Instant::now();
    services.get("kubernetes").await.unwrap();
    assert!(started.elapsed() < delay);
}

#[tokio::test]
async fn seeded_objects_are_readable_directly() {
    let (sim, client) = start().await;
    let seeded = sim.seed_typed(&service("seeded", "LoadBalancer")).unwrap();
    assert!(seeded.spec.unwrap().cluster_ip.is_some());
    let via_api = Api::<Service>::default_namespaced(client)
        .get("seeded")
        .await
        .unwrap();
    assert_eq!(via_api.metadata.uid, seeded.metadata.uid);
    let direct: Option<Service> = sim.get_typed(Some("default"), "seeded").unwrap();
    assert!(direct.is_some());
    assert_eq!(
        sim.list_typed::<Service>(None).unwrap().len(),
        2,
        "seeded plus default/kubernetes"
    );
}

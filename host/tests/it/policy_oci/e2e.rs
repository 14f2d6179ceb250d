//! An image policy under the real `vcd-ccm run`: pulled from a registry
//! that wants credentials, with the pull Secret read through the API, it
//! decides a Service; when its registry goes away, new settings on the
//! same digest load from the pulled copy, and when the entry names a new
//! digest, the previous version keeps deciding and the Lease, the log and
//! `/metrics` say why.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, Namespace, Secret};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::json;

use super::push_two_digests;
use crate::support::poll::wait_until;
use crate::support::registry::{PASSWORD, TestRegistry};
use crate::support::run::{LEASE_NAME, LEASE_NAMESPACE, World};

const POOL_LABEL: &str = "vcd-ccm.io/address-pool";
const WAIT: Duration = Duration::from_secs(90);

fn manifest(reference: &str) -> String {
    format!(
        "policies:
  - name: pools
    image: {reference}
    pullSecret: registry-pull
    selector:
      namespaceSelector:
        matchExpressions:
          - {{key: {POOL_LABEL}, operator: Exists}}
"
    )
}

/// The algorithm of the pools of the Service `uid`.
fn algorithms(world: &World, uid: &str) -> Vec<Option<String>> {
    let needle = format!(" uid={uid}");
    world.vcd.with_world(|w| {
        w.pools
            .iter()
            .filter(|p| {
                p.description
                    .as_deref()
                    .unwrap_or_default()
                    .contains(&needle)
            })
            .map(|p| p.algorithm.clone())
            .collect()
    })
}

async fn label_default_namespace(world: &World) {
    let namespaces: Api<Namespace> = Api::all(world.client.clone());
    let labelled = json!({"metadata": {"name": "default", "labels": {POOL_LABEL: "edge1"}}});
    let created = namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(labelled.clone()).unwrap(),
        )
        .await;
    if created.is_err() {
        namespaces
            .patch("default", &PatchParams::default(), &Patch::Merge(labelled))
            .await
            .expect("the namespace is labelled");
    }
}

async fn create_pull_secret(world: &World, registry: &TestRegistry) {
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "registry-pull", "namespace": LEASE_NAMESPACE},
        "type": "kubernetes.io/dockerconfigjson",
        "stringData": {".dockerconfigjson": registry.docker_config()},
    }))
    .unwrap();
    Api::<Secret>::namespaced(world.client.clone(), LEASE_NAMESPACE)
        .create(&PostParams::default(), &secret)
        .await
        .expect("the pull Secret is created");
}

/// The message of a Warning on the leader Lease with `reason` containing `needle`.
async fn lease_warning(world: &World, reason: &str, needle: &str) -> String {
    let events: Api<Event> = Api::namespaced(world.client.clone(), LEASE_NAMESPACE);
    let (message, _) = wait_until("a Warning on the Lease", WAIT, || async {
        let listed = events
            .list(&Default::default())
            .await
            .map_err(|e| e.to_string())?;
        let messages: Vec<String> = listed
            .items
            .into_iter()
            .filter(|e| e.involved_object.kind.as_deref() == Some("Lease"))
            .filter(|e| e.involved_object.name.as_deref() == Some(LEASE_NAME))
            .filter(|e| e.reason.as_deref() == Some(reason))
            .filter_map(|e| e.message)
            .collect();
        messages
            .iter()
            .find(|m| m.contains(needle))
            .cloned()
            .ok_or_else(|| format!("Lease {reason} Events so far: {messages:?}"))
    })
    .await;
    message
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_policy_decides_and_outlives_its_registry() {
    let Some(registry) = TestRegistry::start_with_auth() else {
        return;
    };
    let (first, second) = push_two_digests(&registry);

    let world = World::start().await;
    create_pull_secret(&world, &registry).await;
    label_default_namespace(&world).await;
    std::fs::create_dir_all(&world.files.policy_dir).unwrap();
    std::fs::write(
        world.files.policy_dir.join("policies.yaml"),
        manifest(&first),
    )
    .unwrap();
    world.add_nodes().await;
    let started = Instant::now();
    let ccm = world.spawn("oci", &[]);
    let web = world.create_service("web", &[80]).await;
    wait_until("the Service's address", WAIT, || world.external_ip("web")).await;
    println!(
        "image policy pulled and the Service served in {:?}",
        started.elapsed()
    );
    assert_eq!(
        algorithms(&world, &web.uid),
        [Some("LEAST_CONNECTIONS".to_string())],
        "the image policy decided"
    );

    // The registry goes away. Settings changed on the same digest load
    // from the pulled copy; then the entry moves to a digest never pulled.
    drop(registry);
    let retimed = manifest(&first).replace("    selector:", "    timeoutMs: 150\n    selector:");
    std::fs::write(world.files.policy_dir.join("policies.yaml"), retimed).unwrap();
    wait_until("the reload from the pulled copy", WAIT, || async {
        let loads = ccm.stderr().matches("policy loaded").count();
        (loads >= 2)
            .then_some(())
            .ok_or_else(|| format!("{loads} loads logged"))
    })
    .await;
    assert!(
        !ccm.stderr().contains("cannot be reached"),
        "{}",
        ccm.stderr()
    );
    std::fs::write(
        world.files.policy_dir.join("policies.yaml"),
        manifest(&second),
    )
    .unwrap();
    let message = lease_warning(
        &world,
        "LoadBalancerPolicyReloadFailed",
        "cannot be reached",
    )
    .await;
    assert!(
        message.starts_with(&format!(
            "policy pools was not reloaded: pulling {second}: registry "
        )) && message.ends_with("; the previous version keeps deciding"),
        "{message}"
    );
    let (failures, _) = wait_until("the pull failure metric", WAIT, || async {
        let value = ccm.metric("policy_image_pull_failures_total").await?;
        (value >= 1.0)
            .then_some(value)
            .ok_or_else(|| format!("{value}"))
    })
    .await;
    assert!(failures >= 1.0);
    let stderr = ccm.stderr();
    assert!(
        stderr.contains("policy refused; the previous version keeps serving")
            && stderr.contains("cannot be reached"),
        "{stderr}"
    );
    assert!(!stderr.contains(PASSWORD), "a credential in the log");
    assert!(!message.contains(PASSWORD), "a credential in the Event");
    let (_, metrics) = ccm.get("/metrics").await.unwrap();
    assert!(
        metrics.contains("policy_loaded_info{policy=\"pools\""),
        "the previous version is still loaded: {metrics}"
    );
    assert_eq!(
        algorithms(&world, &web.uid),
        [Some("LEAST_CONNECTIONS".to_string())],
        "the previous version keeps deciding"
    );
}

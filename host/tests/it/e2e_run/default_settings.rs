//! The built-in policy's settings from `policies.yaml`'s `default` entry,
//! through `vcd-ccm run`: a forbidden annotation is refused and writes
//! nothing, another algorithm reaches every pool, settings the policy
//! refuses keep the previous ones serving with a Warning, and a reload
//! that lifts them re-ensures the Services.

use serde_json::json;

use super::{CONVERGE, START, leading};
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::gateway::{POOLS, posts};

fn write_manifest(world: &World, text: &str) {
    let dir = &world.files.policy_dir;
    std::fs::create_dir_all(dir).expect("the policy directory is created");
    std::fs::write(dir.join("policies.yaml"), text).expect("the manifest is written");
}

/// The algorithm of each of this cluster's pools.
fn algorithms(world: &World) -> Vec<String> {
    world.vcd.with_world(|w| {
        w.pools
            .iter()
            .map(|p| p.algorithm.clone().unwrap_or_default())
            .collect()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_policys_settings_come_from_policies_yaml_and_reload() {
    let world = World::start().await;
    world.add_nodes().await;
    write_manifest(
        &world,
        "default:\n  config:\n    algorithm: least-connections\n    forbiddenAnnotations: [vcd-ccm.io/pool-algorithm]\n",
    );
    let ccm = world.spawn("settings", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let pinned = json!({"vcd-ccm.io/pool-algorithm": "round-robin"});
    world
        .create_annotated_service("pinned", &[80], pinned)
        .await;
    world.create_service("web", &[80]).await;
    wait_until("web's address", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    assert_eq!(algorithms(&world), ["LEAST_CONNECTIONS"], "web's pool only");
    let refusal = wait_until("pinned's refusal", START, || async {
        world.latest_event("pinned", "SyncLoadBalancerFailed").await
    })
    .await
    .0;
    assert!(
        refusal.contains("vcd-ccm.io/pool-algorithm")
            && refusal.contains("default policy setting forbiddenAnnotations"),
        "{refusal}"
    );
    assert!(world.external_ip("pinned").await.is_err());

    // Settings the policy refuses: the previous ones keep serving, and the
    // Services they govern are told.
    write_manifest(&world, "default:\n  config: {algorithm: fastest}\n");
    let warning = wait_until("the refusal's Warning", START, || async {
        world
            .latest_event("web", "LoadBalancerPolicyReloadFailed")
            .await
    })
    .await
    .0;
    assert!(
        warning.contains("policy default was not reloaded") && warning.contains("fastest"),
        "{warning}"
    );
    assert_eq!(posts(&world.vcd, POOLS), 1, "nothing more written");

    // Settings that lift the ban: the Services are ensured again with them.
    write_manifest(&world, "default:\n  config: {algorithm: round-robin}\n");
    wait_until("pinned's address", START + CONVERGE, || {
        world.external_ip("pinned")
    })
    .await;
    wait_until("web's pool on round robin", START, || async {
        let held = algorithms(&world);
        match held == ["ROUND_ROBIN", "ROUND_ROBIN"] {
            true => Ok(()),
            false => Err(format!("{held:?}")),
        }
    })
    .await;
}

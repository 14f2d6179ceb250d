//! Addresses that outlive their Service through `vcd-ccm run`
//! (`vcd-ccm.io/retain-address`, IP Spaces): the deleted Service's
//! allocation stays, claimed and marked; a restart's sweep keeps it;
//! another Service asking for it is refused with the retention named and
//! nothing written; a new Service of the same namespace and name gets it
//! back, and without the annotation its delete releases it. On IP blocks
//! the annotation is refused before any write. An allocation the org made
//! and left unused is someone's reservation, taken by a request only with
//! `loadbalancer.claimUnusedAllocations`.

use serde_json::json;
use vcdsim::Scenario;

use super::{CONVERGE, START, leading};
use crate::support::objects::ServiceEdits;
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::gateway::cluster_objects;

const RETAIN: &str = "vcd-ccm.io/retain-address";

/// The description of the IP Space allocation of `ip`, if there is one.
fn allocation(world: &World, ip: &str) -> Option<String> {
    world.vcd.with_world(|w| {
        w.ip_allocations
            .iter()
            .find(|a| a.value.to_string() == ip)
            .map(|a| a.description.clone())
    })
}

async fn gone(world: &World, name: &str) {
    wait_until(&format!("{name} to be deleted"), CONVERGE, || async {
        match world.service_exists(name).await {
            false => Ok(()),
            true => Err(format!("{name} is still there")),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_address_survives_its_service_and_a_sweep_and_comes_back_by_name() {
    let world = World::start_on(Scenario::ip_space()).await;
    world.add_nodes().await;
    let mut ccm = world.spawn("retain", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    world
        .create_annotated_service("web", &[443], json!({RETAIN: "true"}))
        .await;
    let (ip, _) = wait_until("web's address", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    wait_until("the claim marked to outlive web", CONVERGE, || async {
        match allocation(&world, &ip) {
            Some(d) if d.ends_with(" spec=retain") && d.contains("service=default/web") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;

    world.delete_service("default", "web").await;
    gone(&world, "web").await;
    assert!(cluster_objects(&world.vcd).is_empty(), "web's objects go");
    let kept = allocation(&world, &ip).expect("the allocation stays");
    assert!(kept.ends_with(" spec=retain"), "{kept}");

    // A restart's sweep leaves it (the leader hands over on SIGTERM).
    ccm.terminate();
    ccm.exit_within(START).await;
    let ccm = world.spawn("retain-again", &[]);
    wait_until("the new process to lead", START, || leading(&ccm)).await;
    wait_until("the sweep to report the kept address", CONVERGE, || async {
        match ccm
            .stderr()
            .contains("IP Space allocations kept for deleted Services")
        {
            true => Ok(()),
            false => Err("no sweep line yet".to_string()),
        }
    })
    .await;
    assert_eq!(allocation(&world, &ip), Some(kept.clone()));

    // Another Service asking for it: refused, the retention named.
    let other = world
        .create_annotated_service("other", &[443], json!({"vcd-ccm.io/load-balancer-ip": ip}))
        .await;
    let (message, _) = wait_until("other's refusal", START, || {
        world.latest_event("other", "SyncLoadBalancerFailed")
    })
    .await;
    assert!(
        message.contains("kept for Service default/web") && message.contains(RETAIN),
        "{message}"
    );
    assert!(
        cluster_objects(&world.vcd)
            .iter()
            .all(|o| !o.tag.contains(&other.uid)),
        "nothing of other is written"
    );

    // web again, without the annotation: the address comes back, and its
    // delete releases it.
    let again = world.create_service("web", &[443]).await;
    let (back, _) = wait_until("web's address again", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    assert_eq!(back, ip);
    wait_until("the claim passed to the new web", CONVERGE, || async {
        match allocation(&world, &ip) {
            Some(d) if d.contains(&again.uid) && !d.contains("spec=") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    world.delete_service("default", "web").await;
    gone(&world, "web").await;
    wait_until("the address released", CONVERGE, || async {
        match allocation(&world, &ip) {
            None => Ok(()),
            Some(d) => Err(d),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_ip_blocks_keeping_an_address_is_refused_before_any_write() {
    let world = World::start().await;
    world.add_nodes().await;
    let ccm = world.spawn("retain-blocks", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let web = world
        .create_annotated_service("web", &[443], json!({RETAIN: "true"}))
        .await;
    let (message, _) = wait_until("web's refusal", START, || {
        world.latest_event("web", "SyncLoadBalancerFailed")
    })
    .await;
    assert!(
        message.contains(RETAIN) && message.contains("IP blocks"),
        "{message}"
    );
    assert!(
        cluster_objects(&world.vcd)
            .iter()
            .all(|o| !o.tag.contains(&web.uid))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unused_allocation_is_taken_on_request_only_where_the_provider_allows_it() {
    let world = World::start_on(Scenario::ip_space()).await;
    let client = crate::support::lb::client(&world.vcd).await;
    let space = world.vcd.with_world(|w| w.ip_spaces[0].id.clone());
    let reserved = client
        .ip_spaces()
        .allocate_floating_ip(&space, None)
        .await
        .expect("an allocation of the org")
        .value;
    world.add_nodes().await;
    let request = json!({"vcd-ccm.io/load-balancer-ip": reserved});

    // Off by default: someone's reservation.
    let mut ccm = world.spawn("unused-off", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let web = world
        .create_annotated_service("web", &[443], request.clone())
        .await;
    let (message, _) = wait_until("web's refusal", START, || {
        world.latest_event("web", "SyncLoadBalancerFailed")
    })
    .await;
    assert!(
        message.contains(&reserved) && message.contains("UNUSED"),
        "{message}"
    );
    assert!(
        cluster_objects(&world.vcd)
            .iter()
            .all(|o| !o.tag.contains(&web.uid))
    );
    ccm.terminate();
    ccm.exit_within(START).await;

    // On: the request takes it, and the Service's delete releases it.
    world.add_load_balancer_setting("claimUnusedAllocations: true");
    let ccm = world.spawn("unused-on", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let (ip, _) = wait_until("web's address", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    assert_eq!(ip, reserved);
    assert!(allocation(&world, &ip).is_some_and(|d| d.contains(&web.uid)));
    world.delete_service("default", "web").await;
    gone(&world, "web").await;
    assert_eq!(allocation(&world, &ip), None);
}

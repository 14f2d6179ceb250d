//! Flags of `vcd-ccm run` that only the running binary can show: which
//! paths skip authorization on the HTTPS port, where the Lease lives, which
//! `loadBalancerClass` values are served (and who cleans up the others), and how long a SIGTERM waits for syncs.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, Service};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use vcd_ccm::controllers::service::CLEANUP_FINALIZER;

use super::{START, leading};
use crate::support::objects::typed_lb_service;
use crate::support::policies::default_policy_as;
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::gateway::{POOLS, lb_writes, posts, tasks_in_flight, vcd_writes};
use crate::support::run::process::free_port;

/// Status of an anonymous GET of `path` on the HTTPS port.
async fn anonymous(port: u16, path: &str) -> Result<u16, String> {
    let client = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .map_err(|e| e.to_string())?;
    let response = client
        .get(format!("https://127.0.0.1:{port}{path}"))
        .send()
        .await
        .map_err(|e| format!("GET {path}: {e}"))?;
    Ok(response.status().as_u16())
}

/// The statuses of anonymous GETs of `/healthz`, `/readyz` and `/metrics`
/// on a process serving HTTPS with `flags`.
async fn anonymous_statuses(world: &World, name: &str, flags: &[&str]) -> [u16; 3] {
    let port = free_port();
    let mut args = vec![format!("--secure-port={port}")];
    args.extend(flags.iter().map(|f| f.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _ccm = world.spawn_secure(name, &args);
    let (healthz, _) = wait_until("the HTTPS port to answer", START, || async {
        anonymous(port, "/healthz").await
    })
    .await;
    let readyz = anonymous(port, "/readyz").await.expect("an answer");
    let metrics = anonymous(port, "/metrics").await.expect("an answer");
    [healthz, readyz, metrics]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_paths_named_skip_authorization() {
    let world = World::start().await;
    // The default: health paths open to anyone, /metrics to users RBAC allows.
    let defaults = anonymous_statuses(&world, "defaults", &[]).await;
    assert_eq!(defaults[0], 200, "/healthz");
    assert_eq!(defaults[2], 403, "/metrics");
    // Named instead: /metrics opens, the health paths need a user too.
    let named = anonymous_statuses(
        &world,
        "named",
        &["--authorization-always-allow-paths=/metrics,/livez"],
    )
    .await;
    assert_eq!(named, [403, 403, 200], "/healthz, /readyz, /metrics");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_is_where_the_resource_flags_say() {
    let world = World::start().await;
    let ccm = world.spawn(
        "elsewhere",
        &[
            "--leader-elect-resource-namespace=default",
            "--leader-elect-resource-name=vcd-ccm-leader",
        ],
    );
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let lease = Api::<Lease>::namespaced(world.client.clone(), "default")
        .get("vcd-ccm-leader")
        .await
        .expect("the Lease named by the flags");
    let holder = lease
        .spec
        .and_then(|s| s.holder_identity)
        .unwrap_or_default();
    assert!(!holder.is_empty(), "the Lease has a holder");
    assert_eq!(
        world.lease_holder().await,
        Err("the Lease has no holder yet".to_string()),
        "nothing in the default Lease"
    );
}

async fn create_with_class(world: &World, name: &str, class: Option<&str>) {
    let mut service = typed_lb_service(name, &[80]);
    let spec = service.spec.as_mut().expect("a spec");
    spec.load_balancer_class = class.map(String::from);
    Api::<Service>::namespaced(world.client.clone(), "default")
        .create(&PostParams::default(), &service)
        .await
        .expect("the Service is created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_class_flag_serves_that_class_and_class_less_services_only() {
    let world = World::start().await;
    world.add_nodes().await;
    let ccm = world.spawn("gold", &["--load-balancer-class=vcd-ccm.io/gold"]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    // The other class first: once the later ones are served, the
    // controller has seen it and passed it over.
    create_with_class(&world, "silver", Some("example.com/silver")).await;
    create_with_class(&world, "gold", Some("vcd-ccm.io/gold")).await;
    create_with_class(&world, "plain", None).await;
    for name in ["gold", "plain"] {
        wait_until(&format!("{name} to get its address"), START, || {
            world.external_ip(name)
        })
        .await;
    }
    assert!(
        world.external_ip("silver").await.is_err(),
        "silver is served"
    );
    assert_eq!(
        posts(&world.vcd, POOLS),
        2,
        "one pool each for gold and plain"
    );
}

/// A class-less Service another implementation serves: it holds the
/// shared cleanup finalizer and its address in the status.
async fn create_foreign(world: &World, name: &str) {
    let mut service = typed_lb_service(name, &[80]);
    service.metadata.finalizers = Some(vec![CLEANUP_FINALIZER.to_string()]);
    let services = Api::<Service>::namespaced(world.client.clone(), "default");
    services
        .create(&PostParams::default(), &service)
        .await
        .expect("the Service is created");
    let status = json!({"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.9"}]}}});
    services
        .patch_status(name, &PatchParams::default(), &Patch::Merge(status))
        .await
        .expect("the other implementation's status is written");
}

async fn service(world: &World, name: &str) -> Option<Service> {
    Api::<Service>::namespaced(world.client.clone(), "default")
        .get_opt(name)
        .await
        .expect("the Service is read")
}

/// The messages of Events `reason` on the leader Lease.
async fn lease_events(world: &World, reason: &str) -> Vec<String> {
    Api::<Event>::namespaced(world.client.clone(), "kube-system")
        .list(&Default::default())
        .await
        .expect("the Events are listed")
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some(reason))
        .filter_map(|e| e.message)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_classes_served_and_class_less_services_left_to_another_implementation() {
    let world = World::start().await;
    world.add_nodes().await;
    // A policy selecting a class the process does not serve.
    default_policy_as(
        &world.files.policy_dir,
        "bronze",
        "    selector: {loadBalancerClass: vcd-ccm.io/bronze}\n",
    );
    let ccm = world.spawn(
        "classes",
        &[
            "--load-balancer-class=vcd-ccm.io/gold",
            "--load-balancer-class=vcd-ccm.io/silver",
            "--serve-classless=false",
        ],
    );
    wait_until("the process to lead", START, || leading(&ccm)).await;
    // Queued before the served ones: by the time they have addresses, the
    // controller has seen these and passed them over.
    create_foreign(&world, "theirs").await;
    Api::<Service>::namespaced(world.client.clone(), "default")
        .delete("theirs", &DeleteParams::default())
        .await
        .expect("the deletion is asked for");
    create_with_class(&world, "plain", None).await;
    create_with_class(&world, "gold", Some("vcd-ccm.io/gold")).await;
    create_with_class(&world, "silver", Some("vcd-ccm.io/silver")).await;
    for name in ["gold", "silver"] {
        wait_until(&format!("{name} to get its address"), START, || {
            world.external_ip(name)
        })
        .await;
    }
    assert!(world.external_ip("plain").await.is_err(), "plain is served");
    assert_eq!(
        posts(&world.vcd, POOLS),
        2,
        "one pool each for gold and silver"
    );
    let theirs = service(&world, "theirs").await.expect("theirs still waits");
    assert_eq!(
        theirs.metadata.finalizers,
        Some(vec![CLEANUP_FINALIZER.to_string()]),
        "the other implementation's finalizer is left to it"
    );
    let ingress = theirs.status.and_then(|s| s.load_balancer?.ingress);
    assert_eq!(ingress.map(|i| i.len()), Some(1), "its status is untouched");

    // A served Service turned into a ClusterIP loses its class; what the
    // CCM holds for it in VCD still makes it ours to clean up.
    let patch = json!({"spec": {"type": "ClusterIP", "loadBalancerClass": null}});
    Api::<Service>::namespaced(world.client.clone(), "default")
        .patch("gold", &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("gold becomes a ClusterIP");
    wait_until("gold's finalizer to go", START, || async {
        match service(&world, "gold")
            .await
            .and_then(|s| s.metadata.finalizers)
        {
            Some(f) if !f.is_empty() => Err(format!("finalizers {f:?}")),
            _ => Ok(()),
        }
    })
    .await;
    let pool_deletes = vcd_writes(&world.vcd)
        .iter()
        .filter(|w| w.starts_with("DELETE") && w.contains(POOLS))
        .count();
    assert_eq!(pool_deletes, 1, "gold's pool is deleted");

    let warnings = lease_events(&world, "PolicyClassNotServed").await;
    assert!(
        warnings.iter().any(|m| m
            .contains("policy bronze selects loadBalancerClass \"vcd-ccm.io/bronze\"")
            && m.contains("--load-balancer-class=vcd-ccm.io/bronze")),
        "{warnings:?}"
    );
    let (_, metrics) = ccm.get("/metrics").await.expect("the metrics");
    assert!(
        metrics.contains("vcd_ccm_policies_selecting_unserved_classes 1"),
        "{metrics}"
    );
}

/// Each VCD task takes this long, so a sync is mid-way when SIGTERM lands.
const SLOW_TASK_MS: u64 = 1_500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_waits_no_longer_than_the_grace_period_for_running_syncs() {
    let world = World::start().await;
    world.vcd.set_knobs(|k| k.task_duration_ms = SLOW_TASK_MS);
    world.add_nodes().await;
    let mut ccm = world.spawn("short-grace", &["--shutdown-grace-period=100ms"]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    world.create_service("cut", &[80, 443]).await;
    wait_until("the first gateway write", START, || async {
        match lb_writes(&world.vcd) {
            0 => Err("no write yet".to_string()),
            _ => Ok(()),
        }
    })
    .await;
    ccm.terminate();
    let (status, _) = ccm.exit_within(START).await;
    let log = ccm.stderr();
    assert!(status.success(), "exited with {status}:\n{log}");
    assert!(
        log.contains("syncs still running after the shutdown grace period are cut"),
        "{log}"
    );
    // Cut: a sync of four writes of 1.5 s each could not have ended.
    assert!(world.external_ip("cut").await.is_err(), "the sync finished");
    // The next process finishes it.
    let next = world.spawn("next", &[]);
    wait_until("the next process to lead", START, || leading(&next)).await;
    wait_until("the cut Service to get its address", START, || {
        world.external_ip("cut")
    })
    .await;
    wait_until("no task in flight", START, || async {
        match tasks_in_flight(&world.vcd) {
            0 => Ok(()),
            n => Err(format!("{n} tasks")),
        }
    })
    .await;
}

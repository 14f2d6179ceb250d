//! The core cases through the binary under each VCD API version vcd-ccm is
//! tested with (VCD 10.4.2 to 10.6.1), and against a VCD that lists only
//! 39.x: node initialisation, create, ports change, address change, delete
//! and the sweep at start. vcdsim checks every body strictly as the
//! negotiated version defines it.

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use serde_json::json;
use vcdsim::{Scenario, Sim};

use super::{CONVERGE, START, converged};
use crate::support::objects::ServiceEdits;
use crate::support::poll::wait_until;
use crate::support::run::gateway::{VIRTUAL_SERVICES, cluster_objects};
use crate::support::run::{LiveService, NODES, World};

/// vcdsim's default world, advertising `versions` at `/api/versions`.
fn scenario(versions: &[&str]) -> Scenario {
    let listed = versions.join(", ");
    let yaml = format!(
        "apiVersions: [{listed}]\n{}",
        vcdsim::scenario::DEFAULT_SCENARIO
    );
    Scenario::from_yaml(&yaml).expect("the scenario parses")
}

/// Virtual service creates and updates, and whether each body carried
/// `nonCriticalLoggingEnabled` (API 38.0+).
fn virtual_service_writes(vcd: &Sim) -> Vec<bool> {
    vcd.requests()
        .iter()
        .filter(|e| e.method == "POST" || e.method == "PUT")
        .filter(|e| e.template.starts_with(VIRTUAL_SERVICES))
        .map(|e| e.request_body.get("nonCriticalLoggingEnabled").is_some())
        .collect()
}

/// Answers vcdsim refused: with strict bodies per version, none.
fn refusals(vcd: &Sim) -> Vec<String> {
    vcd.requests()
        .iter()
        .filter(|e| e.method != "GET" && e.status == 400)
        .map(|e| format!("{} {} → {}", e.method, e.path, e.response_body["message"]))
        .collect()
}

async fn nodes_initialised(world: &World) -> Result<(), String> {
    let nodes: Api<Node> = Api::all(world.client.clone());
    for (name, _) in NODES {
        let node = nodes.get(name).await.map_err(|e| e.to_string())?;
        if node.spec.and_then(|s| s.provider_id).is_none() {
            return Err(format!("{name} has no providerID yet"));
        }
    }
    Ok(())
}

async fn core_cases(offered: &[&str], negotiated: &str) {
    let world = World::start_on(scenario(offered)).await;
    world.add_new_nodes().await;
    let ccm = world.spawn("first", &["--leader-elect=false"]);
    wait_until("the process to be ready", START, || ccm.ready()).await;
    let (_, metrics) = ccm.get("/metrics").await.expect("/metrics answers");
    let sample = format!("vcd_ccm_vcd_api_version{{version=\"{negotiated}\"}} 1");
    assert!(
        metrics.lines().any(|l| l == sample),
        "no {sample} in:\n{metrics}"
    );
    let log = ccm.stderr();
    assert!(
        log.lines()
            .any(|l| l.contains("negotiated the VCD API version") && l.contains(negotiated)),
        "the start-up log names no {negotiated}:\n{log}"
    );
    wait_until("the Nodes to be initialised", START, || {
        nodes_initialised(&world)
    })
    .await;

    // Create, then a second port, then another address.
    let mut web = world.create_service("web", &[80]).await;
    converged(&world, std::slice::from_ref(&web)).await;
    world
        .patch_service(
            "default",
            "web",
            json!({"spec": {"ports": [
                {"name": "p80", "port": 80, "protocol": "TCP", "nodePort": 30080},
                {"name": "p8080", "port": 8080, "protocol": "TCP", "nodePort": 30808}
            ]}}),
        )
        .await;
    web.ports = vec![80, 8080];
    converged(&world, std::slice::from_ref(&web)).await;
    let moved = "203.0.113.44";
    world
        .patch_service("default", "web", json!({"spec": {"loadBalancerIP": moved}}))
        .await;
    wait_until(
        "the Service to move to its new address",
        CONVERGE,
        || async {
            match world.external_ip("web").await? {
                ip if ip == moved => converged_now(&world, &web, &ip),
                ip => Err(format!("still at {ip}")),
            }
        },
    )
    .await;

    // Delete.
    world.delete_service("default", "web").await;
    wait_until(
        "the Service and its objects to be gone",
        CONVERGE,
        || async {
            if world.service_exists("web").await {
                return Err("the Service still exists".to_string());
            }
            no_cluster_objects(&world)
        },
    )
    .await;

    // The sweep at start: a Service removed while no process ran.
    let orphan = world.create_service("orphan", &[443]).await;
    converged(&world, std::slice::from_ref(&orphan)).await;
    drop(ccm);
    world
        .patch_service(
            "default",
            "orphan",
            json!({"metadata": {"finalizers": null}}),
        )
        .await;
    world.delete_service("default", "orphan").await;
    assert!(
        !cluster_objects(&world.vcd).is_empty(),
        "the orphan's objects are left"
    );
    let second = world.spawn("second", &["--leader-elect=false"]);
    wait_until(
        "the sweep to remove the orphan's objects",
        CONVERGE,
        || async { no_cluster_objects(&world) },
    )
    .await;
    drop(second);

    let writes = virtual_service_writes(&world.vcd);
    let complete = negotiated >= "38.0";
    assert!(!writes.is_empty());
    assert!(
        writes.iter().all(|carried| *carried == complete),
        "under {negotiated}, nonCriticalLoggingEnabled in virtual service bodies: {writes:?}"
    );
    assert_eq!(refusals(&world.vcd), Vec::<String>::new());
    println!(
        "API {negotiated} (VCD offers {offered:?}): the core cases pass, {} virtual service writes",
        writes.len()
    );
}

fn converged_now(world: &World, service: &LiveService, ip: &str) -> Result<(), String> {
    crate::support::run::gateway::check_converged(&world.vcd, &[(service.clone(), ip.to_string())])
}

fn no_cluster_objects(world: &World) -> Result<(), String> {
    match cluster_objects(&world.vcd).first() {
        Some(left) => Err(format!(
            "{} {} is still tagged for the cluster",
            left.kind, left.name
        )),
        None => Ok(()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_37_0_vcd_10_4_0() {
    core_cases(&["36.0", "37.0"], "37.0").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_37_2_vcd_10_4() {
    core_cases(&["37.2"], "37.2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_38_0_vcd_10_5_0() {
    core_cases(&["37.2", "38.0"], "38.0").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_38_1_vcd_10_5_1() {
    core_cases(&["37.2", "38.0", "38.1"], "38.1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_39_0_vcd_10_6_0() {
    core_cases(&["37.2", "38.0", "38.1", "39.0"], "39.0").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_39_1_vcd_10_6_1() {
    core_cases(&["37.2", "38.0", "38.1", "39.0", "39.1"], "39.1").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vcd_listing_only_39_x() {
    core_cases(&["39.0", "39.1"], "39.1").await;
}

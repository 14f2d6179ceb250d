//! `vcd-ccm plan` through the binary, on the world `run` converged and then
//! left (killed): a converged cluster plans nothing (exit 0); another
//! policy set previews exactly the pools it changes; a virtual service
//! edited by hand plans its repair; a Service being deleted plans its
//! deletes, and one gone from Kubernetes the sweep's; `--output json` says
//! the same; a renewed TLS Secret plans its upload first; and no plan
//! writes anything to VCD.

use std::process::Command;

use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};

use super::{CONVERGE, START};
use crate::support::policies::default_policy_as;
use crate::support::poll::wait_until;
use crate::support::run::gateway::vcd_writes;
use crate::support::run::{RunFiles, World};
use crate::support::tls::{KeyPair, TLS_SECRET};

use super::tls_rotation::put_secret;

/// Runs `vcd-ccm plan` with `files` and `extra`; its exit code and stdout
/// (stderr appended, for messages).
pub(super) fn plan(files: &RunFiles, extra: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_vcd-ccm"))
        .arg("plan")
        .args(files.args())
        .args(extra)
        .env_remove("CLUSTER_ID")
        .env_remove("KUBECONFIG")
        .env_remove("RUST_LOG")
        .output()
        .expect("vcd-ccm plan runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap_or(-1), stdout + &stderr)
}

/// The planned lines of one kind of object, as printed.
pub(super) fn lines<'a>(out: &'a str, prefix: &str) -> Vec<&'a str> {
    out.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(prefix))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_shows_what_a_reconcile_would_write_and_writes_nothing() {
    let world = World::start().await;
    world.add_nodes().await;
    let mut ccm = world.spawn("ccm", &[]);
    let web = world.create_service("web", &[80, 443]).await;
    wait_until("web's external IP", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    ccm.kill();
    let written = vcd_writes(&world.vcd).len();

    let (code, out) = plan(&world.files, &[]);
    assert_eq!(code, 0, "a converged cluster plans nothing:\n{out}");
    assert!(out.contains("default/web: up to date"), "{out}");
    assert!(out.contains("Plan: 0 writes for 1 Services"), "{out}");

    // Another policy set: exactly the two pools change, in their algorithm.
    let mut other = world.files.clone();
    other.policy_dir = world.dir.path().join("other-policies");
    // The default policy, configured for least connections, governing
    // every namespace.
    default_policy_as(
        &other.policy_dir,
        "least",
        "    config: {algorithm: least-connections}\n    selector: {namespaceSelector: {}}\n",
    );
    let (code, out) = plan(&other, &[]);
    assert_eq!(code, 2, "{out}");
    let pools = lines(&out, "~ pool ");
    assert_eq!(pools.len(), 2, "{out}");
    assert!(
        pools
            .iter()
            .all(|l| l.ends_with("-tcp-80 (description, algorithm)")
                || l.ends_with("-tcp-443 (description, algorithm)")),
        "the algorithm changes, and with it the tag's digest:\n{out}"
    );
    assert_eq!(
        lines(&out, "~ ").len() + lines(&out, "+ ").len() + lines(&out, "- ").len(),
        2,
        "{out}"
    );

    // A virtual service edited by hand: its repair, naming what differs.
    world.vcd.with_world(|w| {
        let vs = w
            .virtual_services
            .iter_mut()
            .find(|vs| vs.name.ends_with("-tcp-80"))
            .expect("port 80's virtual service");
        vs.service_ports[0].port_start = 8081;
    });
    let (code, out) = plan(&world.files, &["--output", "json"]);
    assert_eq!(code, 2, "{out}");
    let report: Value = serde_json::from_str(&out).expect("a JSON report");
    let writes = &report["services"][0]["writes"];
    assert_eq!(writes.as_array().map(Vec::len), Some(1), "{report:#}");
    assert_eq!(writes[0]["kind"], "virtual service", "{report:#}");
    assert_eq!(writes[0]["action"], "update", "{report:#}");
    assert!(
        writes[0]["fields"]
            .as_array()
            .is_some_and(|f| f.contains(&json!("servicePorts"))),
        "{report:#}"
    );

    // Deleted while no CCM runs: the finalizer holds the Service.
    let services: Api<Service> = Api::namespaced(world.client.clone(), "default");
    services
        .delete("web", &DeleteParams::default())
        .await
        .expect("the Service is deleted");
    let (code, out) = plan(&world.files, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("default/web (deleted): "), "{out}");
    assert_eq!(lines(&out, "- virtual service ").len(), 2, "{out}");
    assert_eq!(lines(&out, "- pool ").len(), 2, "{out}");

    // Gone from Kubernetes (its finalizer removed by hand): the sweep's deletes.
    let unfinalized = json!({"metadata": {"finalizers": null}});
    services
        .patch("web", &PatchParams::default(), &Patch::Merge(unfinalized))
        .await
        .expect("the finalizer is removed");
    let (code, out) = plan(&world.files, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(&format!("default/web ({}) (deleted): ", web.uid)),
        "{out}"
    );
    assert_eq!(lines(&out, "- virtual service ").len(), 2, "{out}");

    assert_eq!(
        vcd_writes(&world.vcd).len(),
        written,
        "a plan wrote to VCD: {:?}",
        &vcd_writes(&world.vcd)[written..]
    );
}

/// On IP Spaces, a Service's delete releases its address claim: the plan
/// lists that release after the objects' deletes, and sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planned_delete_on_ip_spaces_lists_the_claim_it_releases() {
    let scenario = vcdsim::Scenario::from_yaml(vcdsim::scenario::IP_SPACE_SCENARIO)
        .expect("the scenario parses");
    let world = World::start_on(scenario).await;
    world.add_nodes().await;
    let mut ccm = world.spawn("ccm", &[]);
    world.create_service("web", &[80]).await;
    let (ip, _) = wait_until("web's external IP", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    ccm.kill();
    let services: Api<Service> = Api::namespaced(world.client.clone(), "default");
    services
        .delete("web", &DeleteParams::default())
        .await
        .expect("the Service is deleted");
    let written = vcd_writes(&world.vcd).len();
    let (code, out) = plan(&world.files, &[]);
    assert_eq!(code, 2, "{out}");
    let planned: Vec<&str> = out.lines().map(str::trim).collect();
    let release = format!("- ip space allocation {ip}");
    let at = |line: &str| planned.iter().position(|l| *l == line);
    assert!(at(&release).is_some(), "{out}");
    let last_delete = planned
        .iter()
        .rposition(|l| l.starts_with("- pool ") || l.starts_with("- virtual service "));
    assert!(
        last_delete < at(&release),
        "the release follows the deletes:\n{out}"
    );
    assert_eq!(vcd_writes(&world.vcd).len(), written, "a plan wrote to VCD");
}

/// A Service no reconcile has served yet, on an IP Space: `ip` is what the
/// plan allocates; the allocation comes before every object.
async fn planned_allocation(api_versions: Option<Vec<String>>) -> (String, Vec<String>) {
    let mut scenario = vcdsim::Scenario::from_yaml(vcdsim::scenario::IP_SPACE_SCENARIO)
        .expect("the scenario parses");
    if let Some(versions) = api_versions {
        scenario.api_versions = versions;
    }
    let world = World::start_on(scenario).await;
    world.add_nodes().await;
    world.create_service("web", &[80]).await;
    let (code, out) = plan(&world.files, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(vcd_writes(&world.vcd).is_empty(), "a plan wrote to VCD");
    let planned = out
        .lines()
        .map(str::trim)
        .filter(|l| ["+ ", "~ ", "- "].iter().any(|p| l.starts_with(p)))
        .map(String::from)
        .collect();
    (out, planned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_service_on_an_ip_space_plans_its_allocation_before_its_objects() {
    let (out, planned) = planned_allocation(None).await;
    let first = planned.first().map(String::as_str).unwrap_or_default();
    let ip = first
        .strip_prefix("+ ip space allocation 192.0.2.")
        .unwrap_or_else(|| panic!("the allocation comes first:\n{out}"));
    assert!(ip.parse::<u8>().is_ok(), "{out}");
    assert!(
        planned.iter().any(|l| l.starts_with("+ pool "))
            && planned.iter().any(|l| l.starts_with("+ virtual service ")),
        "{out}"
    );
}

/// Below API 37.2 the IP Space picks the address, so the plan can only
/// say that one will be allocated: what follows depends on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_api_37_2_a_new_service_plans_only_the_allocation_the_space_picks() {
    let (out, planned) = planned_allocation(Some(vec!["37.0".into(), "37.1".into()])).await;
    assert_eq!(
        planned,
        ["+ ip space allocation (an address of public1)"],
        "{out}"
    );
}

/// A renewed TLS Secret: its new certificate's upload is the whole plan
/// (the virtual services' writes name the id VCD gives it), and the plan
/// uploads nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_secret_plans_its_upload_first_and_uploads_nothing() {
    let world = World::start().await;
    world.add_nodes().await;
    put_secret(&world, &KeyPair::generate("web.example")).await;
    let mut ccm = world.spawn("ccm", &[]);
    world
        .create_annotated_service("web", &[443], json!({TLS_SECRET: "443=web-tls"}))
        .await;
    wait_until("web's external IP", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    ccm.kill();
    let (code, out) = plan(&world.files, &[]);
    assert_eq!(code, 0, "converged with its upload:\n{out}");

    put_secret(&world, &KeyPair::generate("web.example")).await;
    let written = vcd_writes(&world.vcd).len();
    let (code, out) = plan(&world.files, &[]);
    assert_eq!(code, 2, "{out}");
    let planned: Vec<&str> = ["+ ", "~ ", "- "]
        .iter()
        .flat_map(|prefix| lines(&out, prefix))
        .collect();
    assert_eq!(planned.len(), 1, "the upload alone:\n{out}");
    assert!(
        planned[0].starts_with("+ certificate ") && planned[0].contains("-default-web-tls-"),
        "{out}"
    );
    assert_eq!(vcd_writes(&world.vcd).len(), written, "a plan wrote to VCD");
}

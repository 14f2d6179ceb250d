//! Upgrading from the previous release: the VCD objects and Kubernetes
//! objects that release left for four Services (HTTP, HTTPS, TCP and UDP on
//! one port, a requested address), in shared-VIP and in one-arm mode, are
//! kept in `host/tests/fixtures/upgrade/<mode>.json`. This binary starts on
//! them: every Service keeps its address, no object is deleted or created
//! anew, each is written at most once (to adopt the newer ownership tag and,
//! for pools, to take their members from the cluster's IP set instead of a
//! list), and then nothing more is written.
//!
//! `hack/upgrade-fixtures.sh <git ref>` builds that release and writes the
//! fixtures again through the ignored test `upgrade::record_fixtures`; do it
//! at each release.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Event, Namespace, Node, Service};
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};

use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::process::{CcmProcess, Logging, free_port};

/// The modes a fixture is kept for, and the cloud config line each adds.
const MODES: [(&str, Option<&str>); 2] = [
    ("shared-vip", None),
    (
        "one-arm",
        Some("oneArm: {startIP: 192.168.8.2, endIP: 192.168.8.100}"),
    ),
];
/// Converging the four Services, and adopting them after the upgrade.
const CONVERGE: Duration = Duration::from_secs(60);
/// No write for this long counts as done.
const QUIET: Duration = Duration::from_secs(5);
/// Load-balancer object collections and their items.
const LB_PATHS: [&str; 4] = [
    "/cloudapi/1.0.0/loadBalancer/pools",
    "/cloudapi/1.0.0/loadBalancer/virtualServices",
    "/cloudapi/1.0.0/edgeGateways/{id}/nat/rules",
    "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules",
];

/// `VCD_CCM_FIXTURES` names another folder, to try a rollback by hand:
/// record with this release there, then start the older one on it
/// (`VCD_CCM_BINARY`).
fn fixture_path(mode: &str) -> PathBuf {
    let folder = std::env::var_os("VCD_CCM_FIXTURES").map(PathBuf::from);
    folder
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upgrade"))
        .join(format!("{mode}.json"))
}

/// The binary started on a fixture: this one, or `VCD_CCM_BINARY`.
fn binary_under_test() -> PathBuf {
    std::env::var_os("VCD_CCM_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_vcd-ccm")))
}

/// The four Services, as the fixtures hold them.
fn services() -> [Value; 4] {
    let service = |name: &str, annotations: Value, spec: Value| {
        let mut spec = spec;
        spec["type"] = json!("LoadBalancer");
        spec["selector"] = json!({"app": name});
        json!({"metadata": {"name": name, "namespace": "default", "annotations": annotations},
            "spec": spec})
    };
    let port = |port: u16, protocol: &str| {
        json!({"name": format!("{}-{port}", protocol.to_lowercase()), "port": port,
            "protocol": protocol, "targetPort": port})
    };
    let mut http = port(80, "TCP");
    http["appProtocol"] = json!("http");
    [
        service("web", json!({}), json!({"ports": [http]})),
        service(
            "secure",
            json!({"service.beta.kubernetes.io/vcloud-avi-ssl-ports": "443",
                "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias": "my-cert"}),
            json!({"ports": [port(443, "TCP")]}),
        ),
        service(
            "dns",
            json!({}),
            json!({"ports": [port(53, "TCP"), port(53, "UDP")]}),
        ),
        service(
            "pinned",
            json!({}),
            json!({"ports": [port(8080, "TCP")], "loadBalancerIP": "203.0.113.40"}),
        ),
    ]
}

/// `vcd-ccm run` of `binary`, one replica without leader election.
fn spawn(world: &World, binary: &Path, name: &str) -> CcmProcess {
    let mut args = world.files.args();
    args.push("--leader-elect=false".into());
    let port = Some(free_port());
    CcmProcess::spawn_binary(
        binary,
        name,
        world.dir.path(),
        args,
        port,
        Logging::Info,
        &[],
    )
}

/// Writes (anything but GET) to load-balancer objects, by method and path.
fn lb_writes(world: &World) -> Vec<(String, String)> {
    world
        .vcd
        .requests()
        .into_iter()
        .filter(|e| e.method != "GET")
        .filter(|e| LB_PATHS.iter().any(|p| e.template.starts_with(p)))
        .map(|e| (e.method, e.path))
        .collect()
}

/// Waits until no load-balancer write happened for [`QUIET`].
async fn quiet(world: &World) -> usize {
    let mut last = (lb_writes(world).len(), Instant::now());
    let (writes, _) = wait_until("the writes to stop", CONVERGE, || {
        let now = lb_writes(world).len();
        if now != last.0 {
            last = (now, Instant::now());
        }
        let quiet_for = last.1.elapsed();
        async move {
            match quiet_for >= QUIET {
                true => Ok(now),
                false => Err(format!("{now} writes, the last {quiet_for:?} ago")),
            }
        }
    })
    .await;
    writes
}

/// Each virtual service's name → its addresses, from a vcdsim dump.
fn virtual_service_addresses(dump: &Value) -> BTreeMap<String, String> {
    dump["virtualServices"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|vs| {
            let address = format!(
                "{} {}",
                vs["virtualIpAddress"].as_str().unwrap_or_default(),
                vs["ipv6VirtualIpAddress"].as_str().unwrap_or_default()
            );
            (vs["name"].as_str().unwrap_or_default().to_string(), address)
        })
        .collect()
}

/// The ids of the load-balancer objects in a vcdsim dump.
fn object_ids(dump: &Value) -> BTreeSet<String> {
    ["pools", "virtualServices", "natRules", "ipAllocations"]
        .iter()
        .flat_map(|family| dump[family].as_array().cloned().unwrap_or_default())
        .filter_map(|object| object["id"].as_str().map(str::to_string))
        .collect()
}

async fn upgrade_from_previous_release(mode: &str, setting: Option<&str>) {
    let path = fixture_path(mode);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; see hack/upgrade-fixtures.sh", path.display()));
    let fixture: Value = serde_json::from_str(&text).expect("the fixture is JSON");
    let world = World::start().await;
    if let Some(line) = setting {
        world.add_load_balancer_setting(line);
    }
    world
        .vcd
        .restore(fixture["vcd"].clone())
        .expect("vcdsim takes the dump");
    for object in fixture["kube"].as_array().expect("Kubernetes objects") {
        world.restore_kube(object.clone());
    }
    world.vcd.reset_log();

    let ccm = spawn(&world, &binary_under_test(), "upgraded");
    // Every Service was looked at: the sync reports each one ensured.
    let events: Api<Event> = Api::namespaced(world.client.clone(), "default");
    wait_until("every Service to be synced", CONVERGE, || async {
        let list = events
            .list(&ListParams::default())
            .await
            .map_err(|e| e.to_string())?;
        let ensured: BTreeSet<String> = list
            .items
            .iter()
            .filter(|e| e.reason.as_deref() == Some("EnsuredLoadBalancer"))
            .filter_map(|e| e.involved_object.name.clone())
            .collect();
        match services()
            .iter()
            .all(|s| ensured.contains(s["metadata"]["name"].as_str().unwrap_or_default()))
        {
            true => Ok(()),
            false => Err(format!("ensured so far: {ensured:?}\n{}", ccm.stderr())),
        }
    })
    .await;
    let writes = quiet(&world).await;
    let after = world.vcd.dump();
    let release = fixture["release"].as_str().unwrap_or("?");
    println!("upgrade from {release} in {mode} mode: {writes} writes, then none for {QUIET:?}");

    assert_eq!(
        virtual_service_addresses(&after),
        virtual_service_addresses(&fixture["vcd"]),
        "a virtual service changed name or address"
    );
    assert_eq!(
        object_ids(&after),
        object_ids(&fixture["vcd"]),
        "objects deleted or created"
    );
    let mut per_object: BTreeMap<(String, String), usize> = BTreeMap::new();
    for write in lb_writes(&world) {
        *per_object.entry(write).or_default() += 1;
    }
    let twice: Vec<_> = per_object.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "written more than once: {twice:?}");
    // The release listed pool members; each pool now names the cluster's
    // IP set, moved in place by the one write above.
    let listed: Vec<String> = world.vcd.with_world(|w| {
        w.pools
            .iter()
            .filter(|p| p.member_group_ref.is_none())
            .map(|p| p.name.clone())
            .collect()
    });
    assert!(listed.is_empty(), "pools still listing members: {listed:?}");
    for service in services() {
        let name = service["metadata"]["name"].as_str().expect("a name");
        let before = fixture["kube"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["kind"] == "Service" && o["metadata"]["name"] == name)
            .map(|o| o["status"]["loadBalancer"].clone());
        let now = world.external_ip(name).await.expect("an address");
        let kept = before.is_some_and(|b| b.to_string().contains(&format!("\"{now}\"")));
        assert!(kept, "{name} has {now}, not its address from before");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrading_from_the_previous_release_in_shared_vip_mode_keeps_every_address() {
    let (mode, setting) = MODES[0];
    upgrade_from_previous_release(mode, setting).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrading_from_the_previous_release_in_one_arm_mode_keeps_every_address() {
    let (mode, setting) = MODES[1];
    upgrade_from_previous_release(mode, setting).await;
}

/// Writes the fixtures with the release at `VCD_CCM_RELEASE_BINARY`
/// (named by `VCD_CCM_RELEASE`): see `hack/upgrade-fixtures.sh`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes the fixtures; run by hack/upgrade-fixtures.sh"]
async fn record_fixtures() {
    let binary = PathBuf::from(
        std::env::var("VCD_CCM_RELEASE_BINARY").expect("VCD_CCM_RELEASE_BINARY names a binary"),
    );
    let release = std::env::var("VCD_CCM_RELEASE").unwrap_or_else(|_| "unnamed".into());
    for (mode, setting) in MODES {
        let world = World::start().await;
        if let Some(line) = setting {
            world.add_load_balancer_setting(line);
        }
        world.add_nodes().await;
        let mut ccm = spawn(&world, &binary, "release");
        let api: Api<Service> = Api::namespaced(world.client.clone(), "default");
        for service in services() {
            let service: Service = serde_json::from_value(service).expect("a Service");
            api.create(&PostParams::default(), &service)
                .await
                .expect("created");
        }
        for service in services() {
            let name = service["metadata"]["name"]
                .as_str()
                .expect("a name")
                .to_string();
            wait_until(&format!("{name} to have an address"), CONVERGE, || {
                world.external_ip(&name)
            })
            .await;
        }
        quiet(&world).await;
        ccm.kill();
        let mut vcd = world.vcd.dump();
        // Sessions are not restored.
        vcd["accessTokens"] = json!({});
        let fixture = json!({
            "release": release,
            "mode": mode,
            "vcd": vcd,
            "kube": kube_objects(&world).await,
        });
        let path = fixture_path(mode);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("the folder");
        let text = serde_json::to_string_pretty(&fixture).expect("JSON");
        std::fs::write(&path, text + "\n").expect("the fixture is written");
        println!("wrote {}", path.display());
    }
}

/// The objects the release read and wrote: the kube-system Namespace (the
/// cluster's identity), the Nodes and the Services, without server fields.
async fn kube_objects(world: &World) -> Vec<Value> {
    let client = world.client.clone();
    let namespace = Api::<Namespace>::all(client.clone())
        .get("kube-system")
        .await
        .expect("kube-system");
    let nodes = Api::<Node>::all(client.clone())
        .list(&ListParams::default())
        .await
        .expect("Nodes");
    let services = Api::<Service>::namespaced(client, "default")
        .list(&ListParams::default())
        .await
        .expect("Services");
    let mut objects = vec![typed(&namespace, "v1", "Namespace")];
    objects.extend(nodes.items.iter().map(|n| typed(n, "v1", "Node")));
    objects.extend(services.items.iter().map(|s| typed(s, "v1", "Service")));
    objects
}

fn typed(object: &impl serde::Serialize, api_version: &str, kind: &str) -> Value {
    let mut value = serde_json::to_value(object).expect("JSON");
    value["apiVersion"] = json!(api_version);
    value["kind"] = json!(kind);
    if let Some(meta) = value["metadata"].as_object_mut() {
        for field in ["resourceVersion", "managedFields", "creationTimestamp"] {
            meta.remove(field);
        }
    }
    value
}

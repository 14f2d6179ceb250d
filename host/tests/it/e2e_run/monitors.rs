//! Tuned health monitors and node probes through `vcd-ccm run`. At API
//! 39.1 the default policy's `vcd-ccm.io/health-check-*` annotations become
//! tenant monitors, one per distinct setting shared by the pools that want
//! it, written back when changed by hand and deleted once no pool uses
//! them; a `Local` Service's pools probe its `healthCheckNodePort`, so a
//! Node without an endpoint counts as down and endpoints moving write
//! nothing; `loadbalancer.kubeProxyHealthCheck` adds kube-proxy's probe.
//! At 38.1 the annotations give a Warning naming the version and the
//! system monitor stays.

use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Api;
use kube::api::PostParams;
use serde_json::{Value, json};
use vcdsim::Scenario;
use vcdsim::world::health_monitor::{HealthMonitor, HttpSettings};

use super::{CONVERGE, START, leading};
use crate::support::check::Setup;
use crate::support::objects::ServiceEdits;
use crate::support::poll::wait_until;
use crate::support::run::gateway::{lb_writes, vcd_writes};
use crate::support::run::{NODES, World};

const INTERVAL: &str = "vcd-ccm.io/health-check-interval";
const TIMEOUT: &str = "vcd-ccm.io/health-check-timeout";
const PATH: &str = "vcd-ccm.io/health-check-path";
const CODES: &str = "vcd-ccm.io/health-check-expected-codes";
const MONITOR: &str = "vcd-ccm.io/health-monitor";
const DRIFT: &str = "--drift-repair-period=500ms";

/// One of the cluster's tenant monitors and the pools it is assigned to.
#[derive(Debug, Clone)]
struct Tenant {
    body: HealthMonitor,
    pools: Vec<String>,
}

fn tenant_monitors(world: &World) -> Vec<Tenant> {
    world.vcd.with_world(|w| {
        w.health_monitors
            .iter()
            .filter(|m| !m.is_system())
            .map(|m| Tenant {
                body: m.body.clone(),
                pools: w
                    .monitor_assignments
                    .iter()
                    .filter(|a| a.monitor_id == m.id())
                    .filter_map(|a| w.pools.iter().find(|p| p.id.as_deref() == Some(&a.pool_id)))
                    .map(|p| p.name.clone())
                    .collect(),
            })
            .collect()
    })
}

/// Waits until the tenant monitors satisfy `check`, and returns them.
async fn monitors_until(
    world: &World,
    what: &str,
    check: impl Fn(&[Tenant]) -> bool,
) -> Vec<Tenant> {
    let (monitors, _) = wait_until(what, START + CONVERGE, || async {
        let monitors = tenant_monitors(world);
        match check(&monitors) {
            true => Ok(monitors),
            false => Err(format!("{monitors:#?}")),
        }
    })
    .await;
    monitors
}

fn pools_of<'a>(monitors: &'a [Tenant], service: &str) -> Vec<&'a Tenant> {
    let prefix = format!("ingress-pool-default.{service}-");
    monitors
        .iter()
        .filter(|m| m.pools.iter().any(|p| p.starts_with(&prefix)))
        .collect()
}

/// The types of the monitors `service`'s first pool lists itself (VCD's
/// system ones; tenant ones are assignments).
fn system_monitors_of(world: &World, service: &str) -> Option<Vec<String>> {
    let prefix = format!("ingress-pool-default.{service}-");
    world.vcd.with_world(|w| {
        w.pools
            .iter()
            .find(|p| p.name.starts_with(&prefix))
            .map(|p| {
                p.health_monitors
                    .iter()
                    .map(|m| m.monitor_type.clone())
                    .collect()
            })
    })
}

/// The request of the one tenant monitor, once `pools` pools are assigned it.
async fn only_probe(world: &World, pools: usize) -> HttpSettings {
    let monitors = monitors_until(world, "one probe", |m| {
        m.len() == 1 && m[0].pools.len() == pools
    })
    .await;
    monitors[0]
        .body
        .http_settings
        .clone()
        .expect("an HTTP probe")
}

/// Waits until the Service's health condition counts `counted`.
async fn health_counts(world: &World, service: &str, counted: &str) {
    wait_until("the members up counted", CONVERGE, || async {
        let message = super::health::health_message(world, service).await?;
        match message.contains(counted) {
            true => Ok(()),
            false => Err(message),
        }
    })
    .await;
}

fn tuned(interval: &str) -> Value {
    json!({MONITOR: "http", INTERVAL: interval, TIMEOUT: "2s", PATH: "/ready", CODES: "2xx"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tuned_monitors_are_shared_repaired_and_deleted_at_39_1() {
    let world = World::start().await;
    world.add_nodes().await;
    let ccm = world.spawn("monitors", &[DRIFT]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    world
        .create_annotated_service("web", &[80], tuned("5s"))
        .await;
    world
        .create_annotated_service("api", &[8080], tuned("5s"))
        .await;
    world
        .create_annotated_service("slow", &[9090], tuned("30s"))
        .await;
    let monitors = monitors_until(&world, "two monitors for three Services", |m| {
        m.len() == 2 && m.iter().map(|t| t.pools.len()).sum::<usize>() == 3
    })
    .await;
    let shared = pools_of(&monitors, "web");
    assert_eq!(shared.len(), 1, "{monitors:#?}");
    assert_eq!(shared[0].pools.len(), 2, "web and api share one monitor");
    let body = &shared[0].body;
    assert_eq!(
        (
            body.monitor_type.as_str(),
            body.send_interval,
            body.receive_timeout
        ),
        ("HTTP", Some(5), Some(2))
    );
    let http = body.http_settings.clone().expect("http settings");
    assert_eq!(http.request_header.as_deref(), Some("GET /ready HTTP/1.0"));
    assert_eq!(
        http.expected_response_codes,
        Some(vec!["HTTP_2XX".to_string()])
    );
    // The tuned monitor replaces the system one: the pool lists only it.
    assert_eq!(
        system_monitors_of(&world, "web"),
        Some(Vec::new()),
        "no system monitor stays on web's pool"
    );

    // Changed by hand: written back at the next drift check.
    let name = shared[0].body.name.clone().expect("a name");
    world.vcd.with_world(|w| {
        let monitor = w
            .health_monitors
            .iter_mut()
            .find(|m| m.body.name.as_deref() == Some(&name))
            .expect("the monitor");
        monitor.body.send_interval = Some(60);
    });
    monitors_until(&world, "the interval written back", |m| {
        m.iter()
            .any(|t| t.body.name.as_deref() == Some(&name) && t.body.send_interval == Some(5))
    })
    .await;
    // Whichever of the two Services sharing it reconciles first repairs it.
    let (message, _) = wait_until("the repair's Event", CONVERGE, || async {
        match world.latest_event("web", "LoadBalancerRepaired").await {
            Ok(message) => Ok(message),
            Err(_) => world.latest_event("api", "LoadBalancerRepaired").await,
        }
    })
    .await;
    assert!(message.contains(&name), "{message}");
    // Taken off a pool by hand: assigned again.
    world.vcd.with_world(|w| {
        let slow = w
            .pools
            .iter()
            .find(|p| p.name.starts_with("ingress-pool-default.slow-"))
            .and_then(|p| p.id.clone());
        w.monitor_assignments
            .retain(|a| Some(&a.pool_id) != slow.as_ref());
    });
    monitors_until(&world, "slow's monitor assigned again", |m| {
        m.len() == 2 && m.iter().map(|t| t.pools.len()).sum::<usize>() == 3
    })
    .await;

    // A Service's own monitor goes with it; a shared one stays for the other.
    world.delete_service("default", "slow").await;
    world.delete_service("default", "web").await;
    let left = monitors_until(&world, "one monitor, api's", |m| {
        m.len() == 1 && m[0].pools.len() == 1
    })
    .await;
    assert_eq!(left[0].body.name.as_deref(), Some(name.as_str()));
    // Untuned again: the pool PUT drops it, and the monitor is deleted.
    world
        .patch_service(
            "default",
            "api",
            json!({"metadata": {"annotations": {INTERVAL: null, TIMEOUT: null, PATH: null, CODES: null}}}),
        )
        .await;
    monitors_until(&world, "no monitor left", |m| m.is_empty()).await;
    assert_eq!(
        system_monitors_of(&world, "api"),
        Some(vec!["HTTP".to_string()])
    );
    let refused: Vec<String> = world
        .vcd
        .requests()
        .iter()
        .filter(|r| r.method != "GET" && r.status >= 400)
        .map(|r| format!("{} {} {}", r.method, r.path, r.response_body))
        .collect();
    assert!(refused.is_empty(), "{refused:#?}");
}

/// vcdsim's default world at API 38.1 (VCD 10.5).
fn at_38_1() -> Scenario {
    let yaml = format!(
        "apiVersions: [\"37.2\", \"38.0\", \"38.1\"]\n{}",
        vcdsim::scenario::DEFAULT_SCENARIO
    );
    Scenario::from_yaml(&yaml).expect("the scenario")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn below_39_the_annotations_warn_naming_the_version_and_nothing_is_tuned() {
    let world = World::start_on(at_38_1()).await;
    world.add_load_balancer_setting("kubeProxyHealthCheck: true");
    world.add_nodes().await;
    let ccm = world.spawn("monitors-38", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    wait_until("the switch's warning", START, || async {
        let log = ccm.stderr();
        match log.contains("loadbalancer.kubeProxyHealthCheck has no effect") {
            true => Ok(()),
            false => Err("not logged yet".to_string()),
        }
    })
    .await;
    world
        .create_annotated_service("web", &[80], tuned("5s"))
        .await;
    wait_until("web's address", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    let (message, _) = wait_until("the Warning", CONVERGE, || {
        world.latest_event("web", "LoadBalancerPolicyWarning")
    })
    .await;
    assert!(message.contains("API 38.1"), "{message}");
    assert!(message.contains("VCD 10.6 (API 39.0)"), "{message}");
    assert_eq!(
        system_monitors_of(&world, "web"),
        Some(vec!["HTTP".to_string()]),
        "the system monitor stays"
    );
    assert!(tenant_monitors(&world).is_empty());
    let touched = world
        .vcd
        .requests()
        .iter()
        .filter(|r| r.template.contains("healthMonitor"))
        .count();
    assert_eq!(touched, 0, "no monitor endpoint is called below 39.0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_service_probes_its_health_check_node_port_and_endpoints_moving_write_nothing() {
    let world = World::start().await;
    world.add_nodes().await;
    let ccm = world.spawn("probes", &["--health-interval=1s"]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    world.create_service("shop", &[80]).await;
    world
        .patch_service(
            "default",
            "shop",
            json!({"spec": {"externalTrafficPolicy": "Local"}}),
        )
        .await;
    let probe = only_probe(&world, 1).await;
    let services: Api<k8s_openapi::api::core::v1::Service> =
        Api::namespaced(world.client.clone(), "default");
    let port = services
        .get("shop")
        .await
        .expect("shop")
        .spec
        .and_then(|s| s.health_check_node_port)
        .expect("a healthCheckNodePort") as u16;
    assert_eq!(probe.port, Some(port));
    assert_eq!(
        probe.request_header.as_deref(),
        Some("GET /healthz HTTP/1.0")
    );

    // Every Node is a member; the one without an endpoint answers 503.
    let (_, first) = NODES[0];
    let (second_name, _) = NODES[1];
    world.vcd.with_world(|w| w.set_probe(first, port, false));
    health_counts(&world, "shop", &format!("1 of {} members up", NODES.len())).await;

    // Endpoints appearing and moving write nothing to VCD.
    let writes = lb_writes(&world.vcd);
    let slices: Api<EndpointSlice> = Api::namespaced(world.client.clone(), "default");
    for (seen, node) in [(1.0, second_name), (2.0, NODES[0].0)] {
        let slice = crate::e2e_traffic_policy::slice("shop", node, &[(node, true)]);
        let slice: EndpointSlice = serde_json::from_value(slice).expect("a slice");
        slices
            .create(&PostParams::default(), &slice)
            .await
            .expect("a slice");
        wait_until("the endpoint change seen", CONVERGE, || async {
            match ccm.metric("vcd_ccm_endpoint_changes_probed_total").await? {
                count if count >= seen => Ok(()),
                count => Err(format!("{count} seen")),
            }
        })
        .await;
    }
    assert_eq!(
        lb_writes(&world.vcd),
        writes,
        "endpoints moving wrote to VCD"
    );
    // Steady: the health reads alone reach VCD, monitors and probes included.
    let others = super::health::steady_calls(&world).await;
    assert!(others.is_empty(), "{others:#?}");
    println!(
        "Local Service at API 39.1: 0 VCD writes for endpoints moving (node probe on port {port}); {} members probed; steady state: the health reads alone (60 calls an hour at --health-interval=60s)",
        NODES.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kube_proxy_switch_adds_its_probe_beside_the_ports_monitor() {
    let world = World::start().await;
    world.add_load_balancer_setting("kubeProxyHealthCheck: true");
    world.add_nodes().await;
    let ccm = world.spawn("kube-proxy", &["--health-interval=1s"]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    world.create_service("web", &[80, 443]).await;
    let probe = only_probe(&world, 2).await;
    assert_eq!(probe.port, Some(10256));
    // The port's system monitor stays, the probe assigned beside it.
    assert_eq!(
        system_monitors_of(&world, "web"),
        Some(vec!["TCP".to_string()])
    );
    // A Node kube-proxy reports as going away stops counting as up.
    world
        .vcd
        .with_world(|w| w.set_probe(NODES[1].1, 10256, false));
    let (ports, nodes) = (2, NODES.len());
    let counted = format!("{} of {} members up", ports * (nodes - 1), ports * nodes);
    health_counts(&world, "web", &counted).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_lists_the_monitor_writes_tuning_would_make() {
    let world = World::start().await;
    world.add_nodes().await;
    let mut ccm = world.spawn("ccm", &[]);
    world.create_service("web", &[80, 443]).await;
    wait_until("web's address", START + CONVERGE, || {
        world.external_ip("web")
    })
    .await;
    ccm.kill();
    world
        .patch_service(
            "default",
            "web",
            json!({"metadata": {"annotations": {INTERVAL: "5s"}}}),
        )
        .await;
    let written = vcd_writes(&world.vcd).len();
    let (code, out) = super::plan::plan(&world.files, &[]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        super::plan::lines(&out, "+ health monitor vcd-ccm-monitor-").len(),
        1,
        "{out}"
    );
    assert_eq!(
        super::plan::lines(&out, "+ health monitor assignment ").len(),
        2,
        "{out}"
    );
    assert_eq!(super::plan::lines(&out, "~ pool ").len(), 2, "{out}");
    assert_eq!(
        vcd_writes(&world.vcd).len(),
        written,
        "the plan wrote to VCD"
    );
}

#[tokio::test]
async fn check_says_whether_tenant_monitors_are_there() {
    let setup = Setup::start(Scenario::default_scenario(), "  certAlias: my-cert\n").await;
    let detail = setup.check(&[]).await.passed("load-balancer");
    assert!(detail.ends_with("tenant health monitors on"), "{detail}");
    let probed = "  certAlias: my-cert\n  kubeProxyHealthCheck: true\n";
    let setup = Setup::start(at_38_1(), probed).await;
    let detail = setup.check(&[]).await.passed("load-balancer");
    assert!(
        detail.ends_with(
            "tenant health monitors off below API 39.0 (loadbalancer.kubeProxyHealthCheck has no effect)"
        ),
        "{detail}"
    );
}

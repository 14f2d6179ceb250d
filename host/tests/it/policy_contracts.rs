//! Contract versions side by side: the example provider policy, built
//! against `vcd:lb-policy@0.1.0`, test policies on 0.2.0 and 0.3.0 and the
//! built-in default on 0.4.0 serve from one registry, each called with its
//! own version's record shapes; and the host refuses `preserve-client-ip`
//! where the gateway cannot honour it.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use prometheus_client::registry::Registry as MetricRegistry;
use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::contract::Contract;
use vcd_ccm::policy::loader::{self, sha256_hex};
use vcd_ccm::policy::model::{
    AddressChoice, AddressPool, AppProfile, Decision, DecisionInput, HealthMonitor, IpAddress,
    IpMode, IpRange, Namespace, Persistence, PoolAlgorithm, PoolSource, PortDecision, PortTraffic,
    Protocol, SessionAffinity,
};
use vcd_ccm::policy::{EvalError, PolicyEngine, Registry, directory, metrics};

use crate::support::policies::web_input;

const PRESERVE: &str = "vcd-ccm.io/preserve-client-ip";

/// shop/web asking for its clients' addresses, with every 0.2.0 input field
/// set, on edge-1 with or without transparent mode.
fn preserving_input(transparent_mode: bool) -> DecisionInput {
    let mut input = web_input();
    input
        .service
        .annotations
        .push((PRESERVE.into(), "true".into()));
    input.service.load_balancer_source_ranges = vec!["192.0.2.0/24".into()];
    input.ready_endpoints = 2;
    input.cluster.gateway = "edge-1".into();
    input.cluster.vcd_api_version = "37.2".into();
    input.cluster.capabilities.transparent_mode = transparent_mode;
    input
}

/// The namespace the example policy governs, naming its pool by label.
fn gold() -> Namespace {
    Namespace {
        name: "shop".into(),
        labels: vec![
            ("tier".into(), "gold".into()),
            ("vcd-ccm.io/address-pool".into(), "public".into()),
        ],
    }
}

/// The default policy, for namespaces labelled `tier: gold` the example
/// policy (0.1.0), and for the class `vcd-ccm.io/test` the misbehaving test
/// policy told to behave (0.2.0), for the class `vcd-ccm.io/frozen` a
/// policy on 0.3.0, loaded from a policy directory as a provider ships them.
fn registry(engine: &Arc<PolicyEngine>) -> Registry {
    let example = std::fs::read(format!("{ARTIFACTS_DIR}/namespace_pools.wasm")).unwrap();
    let behaving = std::fs::read(format!("{ARTIFACTS_DIR}/misbehaving.wasm")).unwrap();
    let frozen = std::fs::read(format!("{ARTIFACTS_DIR}/frozen_0_3.wasm")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("namespace-pools.wasm"), &example).unwrap();
    std::fs::write(dir.path().join("behaving.wasm"), &behaving).unwrap();
    std::fs::write(dir.path().join("frozen.wasm"), &frozen).unwrap();
    let manifest = format!(
        "policies:\n- name: namespace-pools\n  sha256: {}\n  selector: {{namespaceSelector: {{matchLabels: {{tier: gold}}}}}}\n- name: behaving\n  sha256: {}\n  config: ok\n  selector: {{loadBalancerClass: vcd-ccm.io/test}}\n- name: frozen\n  sha256: {}\n  selector: {{loadBalancerClass: vcd-ccm.io/frozen}}\n",
        sha256_hex(&example),
        sha256_hex(&behaving),
        sha256_hex(&frozen)
    );
    std::fs::write(dir.path().join("policies.yaml"), manifest).unwrap();
    let default = engine
        .block_on(loader::load_default(
            engine,
            "{}".into(),
            Default::default(),
        ))
        .unwrap();
    let (set, report) = engine
        .block_on(directory::load(engine, dir.path(), Arc::new(default), None))
        .unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    Registry::new(set)
}

fn tcp80(algorithm: PoolAlgorithm) -> PortDecision {
    PortDecision {
        service_port: 80,
        protocol: Protocol::Tcp,
        listen_port: 80,
        profile: AppProfile::L4Tcp,
        certificate: None,
        health_monitor: HealthMonitor::Tcp,
        algorithm,
        monitor: None,
    }
}

#[test]
fn one_registry_serves_0_1_to_0_3_policies_and_the_0_4_default_side_by_side() {
    let engine = PolicyEngine::new().unwrap();
    let registry = registry(&engine);
    let set = registry.current();
    let mut input = preserving_input(true);
    // The current decision is lowered in each version's shape too.
    let current = IpAddress::from(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 12)));
    input.current = Some(Decision {
        preserve_client_ip: true,
        traffic: vec![PortTraffic {
            service_port: 80,
            protocol: Protocol::Tcp,
            persistence: Persistence::HttpCookie("shop".into()),
            http: Default::default(),
            drain_seconds: 0,
        }],
        service_engine_group: Some("seg1".into()),
        ip_mode: IpMode::Vip,
        hostname: Some("web.example.com".into()),
        ..Decision::of(AddressChoice::Specific(current), Vec::new(), Vec::new())
    });
    // An internal pool, first: only a 0.4.0 policy is offered it.
    let mut internal: AddressPool = input.pools[0].clone();
    internal.name = "internal".into();
    internal.source = PoolSource::InternalRange;
    internal.external = false;
    let ip = |text: &str| IpAddress::from(text.parse::<std::net::IpAddr>().unwrap());
    internal.ranges = vec![IpRange {
        first: ip("10.20.0.10"),
        last: ip("10.20.0.50"),
    }];
    input.pools.insert(0, internal);
    input.service.session_affinity = SessionAffinity::ClientIp(300);

    let example = set.select(&input.service, &gold()).unwrap();
    assert_eq!(
        (example.name(), example.contract()),
        ("namespace-pools", Contract::V0_1)
    );
    let default = set.select(&input.service, &input.namespace).unwrap();
    assert_eq!(
        (default.name(), default.contract()),
        ("default", Contract::V0_4)
    );

    // The 0.1.0 policy decides from what its version has; it cannot ask for
    // client addresses, so its decision never preserves them.
    let mut governed = input.clone();
    governed.namespace = gold();
    assert_eq!(
        engine.block_on(example.decide(&governed)).unwrap(),
        Decision::of(
            AddressChoice::KeepCurrent,
            vec![tcp80(PoolAlgorithm::LeastConnections)],
            Vec::new()
        )
    );
    // The 0.2.0 policy gets its input without the session affinity, and
    // cannot ask for persistence.
    let mut tested = input.clone();
    tested.service.load_balancer_class = Some("vcd-ccm.io/test".into());
    let behaving = set.select(&tested.service, &tested.namespace).unwrap();
    assert_eq!(
        (behaving.name(), behaving.contract()),
        ("behaving", Contract::V0_2)
    );
    let decision = engine.block_on(behaving.decide(&tested));
    assert!(
        matches!(&decision, Err(EvalError::InvalidDecision { problem, .. }) if problem.contains("Service port 80/tcp has no entry")),
        "{decision:?}"
    );
    // The 0.3.0 policy is offered the external pool only, and its
    // decision comes back with every 0.4.0 field neutral.
    let mut frozen_input = input.clone();
    frozen_input.service.load_balancer_class = Some("vcd-ccm.io/frozen".into());
    let frozen = set
        .select(&frozen_input.service, &frozen_input.namespace)
        .unwrap();
    assert_eq!(
        (frozen.name(), frozen.contract()),
        ("frozen", Contract::V0_3)
    );
    assert_eq!(
        engine.block_on(frozen.decide(&frozen_input)).unwrap(),
        Decision {
            traffic: vec![PortTraffic {
                service_port: 80,
                protocol: Protocol::Tcp,
                persistence: Persistence::ClientIp,
                http: Default::default(),
                drain_seconds: 0,
            }],
            ..Decision::of(
                AddressChoice::FromPool("public".into()),
                vec![tcp80(PoolAlgorithm::RoundRobin)],
                vec!["offered 1 pools".into()],
            )
        }
    );
    // The 0.4.0 default maps the affinity to client-IP persistence.
    assert_eq!(
        engine.block_on(default.decide(&input)).unwrap(),
        Decision {
            preserve_client_ip: true,
            traffic: vec![PortTraffic {
                service_port: 80,
                protocol: Protocol::Tcp,
                persistence: Persistence::ClientIp,
                http: Default::default(),
                drain_seconds: 0,
            }],
            ..Decision::of(
                AddressChoice::KeepCurrent,
                vec![tcp80(PoolAlgorithm::RoundRobin)],
                Vec::new()
            )
        }
    );

    // Each loaded policy is labelled with the version it implements.
    let mut metric_registry = MetricRegistry::default();
    metrics::register_policy_set(&mut metric_registry, Arc::new(registry));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &metric_registry).unwrap();
    for (policy, contract) in [
        ("default", "0.4.0"),
        ("frozen", "0.3.0"),
        ("behaving", "0.2.0"),
        ("namespace-pools", "0.1.0"),
    ] {
        assert!(
            text.lines().any(|l| l.starts_with("policy_loaded_info{")
                && l.contains(&format!(r#"policy="{policy}""#))
                && l.contains(&format!(r#"contract="{contract}""#))),
            "{policy} on {contract} in\n{text}"
        );
    }
}

#[test]
fn a_policy_preserving_client_ips_is_refused_where_the_gateway_lacks_transparent_mode() {
    let engine = PolicyEngine::new().unwrap();
    let registry = registry(&engine);
    let set = registry.current();
    let input = preserving_input(false);

    let default = set.select(&input.service, &input.namespace).unwrap();
    let error = engine.block_on(default.decide(&input)).unwrap_err();
    let EvalError::InvalidDecision { policy, problem } = &error else {
        panic!("expected a refused decision, got {error:?}");
    };
    assert_eq!(policy, "default");
    assert_eq!(
        problem,
        "preserve-client-ip needs NSX ALB transparent mode, but edge gateway edge-1 does not have transparent mode enabled: the provider enables it in the gateway's load-balancer settings (transparentModeEnabled, VCD 10.4.1+ / API 37.1+)"
    );
    assert!(
        error
            .to_string()
            .starts_with("policy default made an invalid decision: preserve-client-ip"),
        "{error}"
    );

    // Before API 37.1, the version is what is missing.
    let mut old = input.clone();
    old.cluster.vcd_api_version = "36.3".into();
    let error = engine.block_on(default.decide(&old)).unwrap_err();
    assert!(
        error.to_string().contains(
            "VCD API 36.3 has no transparent mode: it needs VCD 10.4.1 or later (API 37.1+)"
        ),
        "{error}"
    );

    // The 0.1.0 policy, which cannot ask for it, decides as before on the same gateway.
    let mut governed = input;
    governed.namespace = gold();
    let example = set.select(&governed.service, &governed.namespace).unwrap();
    let decision = engine.block_on(example.decide(&governed)).unwrap();
    assert!(!decision.preserve_client_ip);
}

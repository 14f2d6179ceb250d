//! The health and metrics server over HTTP and HTTPS: health checks,
//! readiness from cache sync and VCD reachability, the policy metrics on
//! `/metrics`, and errors that name the file or address at fault.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use crate::support::policies::{misbehaving, web_input};

use kubesim::KubeSim;
use prometheus_client::registry::Registry as MetricRegistry;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use vcd_ccm::controllers::leader::{LeaderConfig, LeaderElector};
use vcd_ccm::controllers::{CacheSync, EventRecorder};
use vcd_ccm::policy::builtin::DEFAULT_POLICY_WASM;
use vcd_ccm::policy::loader::{self, sha256_hex};
use vcd_ccm::policy::registry::PolicySet;
use vcd_ccm::policy::{EvalError, Limits, PolicyEngine, Registry, metrics};
use vcd_ccm::serve::{
    self, Certificate, Check, OPENMETRICS_CONTENT_TYPE, Probes, ServeConfig, ServeError,
    SharedRegistry, Transport,
};

fn loopback(transport: Transport) -> ServeConfig {
    ServeConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        transport,
    }
}

fn shared(registry: MetricRegistry) -> SharedRegistry {
    Arc::new(RwLock::new(registry))
}

/// Status, content type and body.
async fn get(client: &reqwest::Client, url: &str) -> (u16, String, String) {
    let response = client.get(url).send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, content_type, response.text().await.unwrap())
}

#[tokio::test]
async fn plain_http_reports_health_then_readiness_once_caches_sync_and_vcd_answers() {
    let kube = KubeSim::start().await.unwrap();
    let client = kube.client().unwrap();
    let recorder = EventRecorder::new(client.clone(), "cloud-controller-manager", "test");
    let mut registry = MetricRegistry::default();
    let elector =
        LeaderElector::new(client, LeaderConfig::default(), recorder, &mut registry).unwrap();
    let leader_health = elector.health();
    let caches = CacheSync::default();
    let services = caches.register("services");
    let nodes = caches.register("nodes");
    let vcd_reached = Arc::new(AtomicBool::new(false));
    let reached = vcd_reached.clone();
    let probes = Probes {
        health: vec![Check::new("leaderElection", move || leader_health.check())],
        ready: vec![
            Check::new("informer-sync", move || caches.check()),
            Check::new("vcd", move || {
                if reached.load(Ordering::SeqCst) {
                    Ok(())
                } else {
                    Err("VCD has not answered yet".into())
                }
            }),
        ],
    };
    let server = serve::start(
        loopback(Transport::Http),
        probes,
        shared(registry),
        None,
        None,
    )
    .await
    .unwrap();
    assert_ne!(server.local_addr().port(), 0);
    assert!(server.url().starts_with("http://127.0.0.1:"));
    let http = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", server.url());

    let (status, _, body) = get(&http, &url("/healthz")).await;
    assert_eq!(
        (status, body.as_str()),
        (200, "ok"),
        "a candidate is healthy"
    );

    let (status, _, body) = get(&http, &url("/readyz")).await;
    assert_eq!(status, 500);
    assert!(
        body.contains("[-]informer-sync failed: caches not synced: services, nodes\n"),
        "{body}"
    );
    assert!(
        body.contains("[-]vcd failed: VCD has not answered yet\n"),
        "{body}"
    );
    assert!(body.ends_with("readyz check failed\n"), "{body}");

    services.set();
    nodes.set();
    let (status, _, body) = get(&http, &url("/readyz")).await;
    assert_eq!(status, 500);
    assert!(body.contains("[+]informer-sync ok\n"), "{body}");
    assert!(body.contains("[-]vcd failed"), "{body}");
    // The same checks as a metric, run at scrape time.
    let (_, _, body) = get(&http, &url("/metrics")).await;
    for sample in [
        r#"vcd_ccm_check_passing{probe="readyz",check="informer-sync"} 1"#,
        r#"vcd_ccm_check_passing{probe="readyz",check="vcd"} 0"#,
        r#"vcd_ccm_check_passing{probe="healthz",check="leaderElection"} 1"#,
    ] {
        assert!(body.contains(sample), "{sample}:\n{body}");
    }

    vcd_reached.store(true, Ordering::SeqCst);
    let (status, _, body) = get(&http, &url("/readyz")).await;
    assert_eq!((status, body.as_str()), (200, "ok"));

    let (status, content_type, body) = get(&http, &url("/metrics")).await;
    assert_eq!(status, 200);
    assert_eq!(content_type, OPENMETRICS_CONTENT_TYPE);
    assert!(
        body.contains(r#"leader_election_master_status{name="cloud-controller-manager"} 0"#),
        "{body}"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");

    let stopped_url = url("/healthz");
    server.stop().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while http.get(&stopped_url).send().await.is_ok() {
        assert!(Instant::now() < deadline, "still serving after stop");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_failing_health_check_fails_healthz_and_is_named_with_its_reason() {
    let probes = Probes {
        health: vec![
            Check::new("ping", || Ok(())),
            Check::new("leaderElection", || {
                Err("failed election to renew leadership on lease kube-system/cloud-controller-manager".into())
            }),
        ],
        ..Probes::default()
    };
    let server = serve::start(
        loopback(Transport::Http),
        probes,
        shared(MetricRegistry::default()),
        None,
        None,
    )
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let (status, _, body) = get(&http, &format!("{}/healthz", server.url())).await;
    assert_eq!(status, 500);
    assert_eq!(
        body,
        "[+]ping ok\n\
         [-]leaderElection failed: failed election to renew leadership on lease kube-system/cloud-controller-manager\n\
         healthz check failed\n"
    );
    let (status, _, body) = get(&http, &format!("{}/healthz/ping", server.url())).await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    let (status, _, _) = get(&http, &format!("{}/healthz/leaderElection", server.url())).await;
    assert_eq!(status, 500);
    let (status, _, _) = get(&http, &format!("{}/healthz/nothing", server.url())).await;
    assert_eq!(status, 404);
    // Readiness has no checks of its own here and no caches to wait for.
    let (status, _, _) = get(&http, &format!("{}/readyz", server.url())).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn https_serves_a_certificate_generated_at_start() {
    let server = serve::start(
        loopback(Transport::Https(Certificate::SelfSigned)),
        Probes::default(),
        shared(MetricRegistry::default()),
        None,
        None,
    )
    .await
    .unwrap();
    assert!(server.url().starts_with("https://127.0.0.1:"));
    let url = format!("{}/healthz", server.url());
    let trusting = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let (status, _, body) = get(&trusting, &url).await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    // A verifying client refuses it: the certificate is self-signed.
    let verifying = reqwest::Client::new();
    assert!(verifying.get(&url).send().await.is_err());
    // Plain HTTP gets no answer from the TLS port.
    let plain = format!("http://{}/healthz", server.local_addr());
    assert!(reqwest::Client::new().get(&plain).send().await.is_err());

    server.stop().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while trusting.get(&url).send().await.is_ok() {
        assert!(Instant::now() < deadline, "still serving after stop");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A CA, and a certificate for 127.0.0.1 it signed with its key, as PEM.
fn issued_pair() -> (String, String, String) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    (ca.pem(), cert.pem(), key.serialize_pem())
}

fn files(dir: &Path, cert: &str, key: &str) -> Certificate {
    let (cert_path, key_path) = (dir.join("tls.crt"), dir.join("tls.key"));
    std::fs::write(&cert_path, cert).unwrap();
    std::fs::write(&key_path, key).unwrap();
    Certificate::Files {
        cert: cert_path,
        key: key_path,
    }
}

#[tokio::test]
async fn https_serves_the_certificate_from_the_given_files() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = issued_pair();
    let server = serve::start(
        loopback(Transport::Https(files(dir.path(), &cert, &key))),
        Probes::default(),
        shared(MetricRegistry::default()),
        None,
        None,
    )
    .await
    .unwrap();
    let verifying = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .build()
        .unwrap();
    let (status, _, body) = get(&verifying, &format!("{}/healthz", server.url())).await;
    assert_eq!((status, body.as_str()), (200, "ok"));
}

#[tokio::test]
async fn unusable_tls_files_and_a_taken_port_are_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let start = |config: ServeConfig| async move {
        match serve::start(
            config,
            Probes::default(),
            shared(MetricRegistry::default()),
            None,
            None,
        )
        .await
        {
            Ok(server) => panic!("started on {}", server.url()),
            Err(error) => error,
        }
    };
    let missing = dir.path().join("missing.crt");
    let error = start(loopback(Transport::Https(Certificate::Files {
        cert: missing.clone(),
        key: dir.path().join("missing.key"),
    })))
    .await;
    assert!(matches!(&error, ServeError::CertificateFile { path, .. } if *path == missing));
    assert!(error.to_string().contains("missing.crt"), "{error}");

    let (_, cert, key) = issued_pair();
    let error = start(loopback(Transport::Https(files(dir.path(), &cert, &cert)))).await;
    assert!(matches!(error, ServeError::KeyFile { .. }), "{error}");
    assert!(error.to_string().contains("tls.key"), "{error}");

    let (_, other_cert, _) = issued_pair();
    let error = start(loopback(Transport::Https(files(
        dir.path(),
        &other_cert,
        &key,
    ))))
    .await;
    assert!(matches!(error, ServeError::KeyPair { .. }), "{error}");
    assert!(
        error.to_string().contains("tls.crt") && error.to_string().contains("tls.key"),
        "{error}"
    );

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let error = start(ServeConfig {
        listen: addr,
        transport: Transport::Http,
    })
    .await;
    assert!(matches!(error, ServeError::Bind { .. }), "{error}");
    assert!(error.to_string().contains(&addr.to_string()), "{error}");
}

#[tokio::test]
async fn metrics_show_policy_evaluations_by_outcome_and_the_loaded_policy_digest() {
    let engine = PolicyEngine::new().unwrap();
    let mut registry = MetricRegistry::default();
    engine.register_metrics(&mut registry);
    let policy = Arc::new(
        loader::load_default(&engine, "{}".into(), Default::default())
            .await
            .unwrap(),
    );
    let policies = Arc::new(Registry::new(PolicySet::only_default(policy.clone())));
    metrics::register_policy_set(&mut registry, policies.clone());

    policy
        .decide(&web_input())
        .await
        .expect("the default policy decides");
    let mut portless = web_input();
    portless.service.ports.clear();
    assert!(matches!(
        policy.decide(&portless).await,
        Err(EvalError::Declined { .. })
    ));
    // "ok" answers keep-current for a Service without an address: invalid.
    let invalid = misbehaving(&engine, "ok", Limits::default())
        .await
        .decide(&web_input())
        .await;
    assert!(matches!(invalid, Err(EvalError::InvalidDecision { .. })));
    let trap = misbehaving(&engine, "trap", Limits::default())
        .await
        .decide(&web_input())
        .await;
    assert!(matches!(trap, Err(EvalError::Call { .. })));
    policies.note_reload(vec![(
        "tenant-a".into(),
        "sha256 does not match its pin".into(),
    )]);

    let server = serve::start(
        loopback(Transport::Http),
        Probes::default(),
        shared(registry),
        None,
        None,
    )
    .await
    .unwrap();
    let (status, content_type, body) = get(
        &reqwest::Client::new(),
        &format!("{}/metrics", server.url()),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(content_type, OPENMETRICS_CONTENT_TYPE);
    let digest = sha256_hex(DEFAULT_POLICY_WASM);
    assert_eq!(policy.digest(), digest);
    for line in [
        r#"policy_evaluations_total{policy="default",outcome="ok"} 1"#.to_string(),
        r#"policy_evaluations_total{policy="default",outcome="declined"} 1"#.to_string(),
        r#"policy_evaluation_duration_seconds_count{policy="default"} 2"#.to_string(),
        r#"policy_evaluations_total{policy="misbehaving",outcome="invalid"} 1"#.to_string(),
        r#"policy_evaluations_total{policy="misbehaving",outcome="trap"} 1"#.to_string(),
        format!(r#"policy_loaded_info{{policy="default",sha256="{digest}",contract="0.4.0"}} 1"#),
        "policy_reloads_total 1".to_string(),
        "policy_reload_refusals_total 1".to_string(),
    ] {
        assert!(
            body.lines().any(|l| l == line),
            "no line {line:?} in\n{body}"
        );
    }
}

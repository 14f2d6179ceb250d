//! The private key of a TLS Secret goes to VCD in the upload body and
//! nowhere else: with every log of the process captured at TRACE, an
//! upload, a refused Secret and a rotation leave no trace of any key in the
//! log, the Events, the Services' conditions or the metrics.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use tracing::Level;

use crate::support::alone::run_alone;
use crate::support::capture::Captured;
use crate::support::cluster::{Cluster, ServiceControllerConfig, fast_config, wait_for};
use crate::support::tls::{KeyPair, https_service};

/// Pieces of a key as it could leak: a line of its PEM, a stretch of the
/// base64 the API server sends it in, and its bytes as `Debug` prints them.
fn traces_of(key: &str) -> Vec<String> {
    let line = key.lines().nth(1).expect("a PEM body line").to_string();
    let encoded = STANDARD.encode(key);
    let bytes = format!("{:?}", &key.as_bytes()[40..60]);
    vec![
        line,
        encoded[96..156].to_string(),
        bytes.trim_matches(['[', ']']).to_string(),
    ]
}

/// Runs in a process of its own (the capture needs tracing to itself), on
/// one thread: every task of the controller, the load balancer and both
/// simulators runs on the thread whose subscriber captures the output.
#[test]
fn no_private_key_reaches_the_log_events_conditions_or_metrics_at_trace_level() {
    const TEST: &str = "e2e_tls_secrecy::no_private_key_reaches_the_log_events_conditions_or_metrics_at_trace_level";
    if !run_alone(TEST) {
        return;
    }
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(Level::TRACE)
        .with_ansi(false)
        .with_writer(captured.clone())
        .finish();
    let _capture = tracing::subscriber::set_default(subscriber);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(upload_refuse_and_rotate(&captured));
}

async fn upload_refuse_and_rotate(captured: &Captured) {
    let config = ServiceControllerConfig {
        tls_secret_period: Some(Duration::from_millis(300)),
        ..fast_config()
    };
    let cluster = Cluster::start_with(config, |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let (first, second, stranger) = (
        KeyPair::generate("web.example"),
        KeyPair::generate("web.example"),
        KeyPair::generate("other.example"),
    );
    // Served from a Secret, then rotated.
    cluster.put_tls_secret("default", "web-tls", &first).await;
    cluster
        .create_service("default", https_service("web", 30443, "web-tls"))
        .await;
    cluster.wait_for_ip("default", "web").await;
    cluster.put_tls_secret("default", "web-tls", &second).await;
    wait_for("the rotated upload", || async {
        let uploads = cluster.uploads();
        (uploads.len() == 1 && uploads[0].1.ends_with(&second.digest12())).then_some(())
    })
    .await;
    // Refused: a key that is not the certificate's.
    let mismatched = [
        ("tls.crt", first.cert.as_str()),
        ("tls.key", stranger.key.as_str()),
    ];
    cluster
        .put_secret("default", "bad-tls", "kubernetes.io/tls", &mismatched)
        .await;
    cluster
        .create_service("default", https_service("bad", 30444, "bad-tls"))
        .await;
    let refused = cluster
        .wait_for_event("default", "bad", "SyncLoadBalancerFailed")
        .await;
    assert!(refused.contains("tls.key does not belong"), "{refused}");

    let log = captured.text();
    assert!(
        log.contains("TRACE") && log.contains("uploaded a TLS Secret's certificate"),
        "the capture sees the process at trace level"
    );
    let mut published = String::new();
    for name in ["web", "bad"] {
        for (reason, message) in cluster.events("default", name).await {
            published.push_str(&format!("{reason}: {message}\n"));
        }
        let service = cluster.service("default", name).await.expect("the Service");
        published.push_str(&serde_json::to_string(&service.status).expect("status"));
    }
    published.push_str(&cluster.metrics_text());
    for key in [&first.key, &second.key, &stranger.key] {
        for trace in traces_of(key) {
            assert!(!log.contains(&trace), "a key in the log: {trace}");
            assert!(
                !published.contains(&trace),
                "a key in Events, status or metrics: {trace}"
            );
        }
    }
}

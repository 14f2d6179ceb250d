//! TLS against vcdsim's HTTPS listener: verified with its CA bundle,
//! refused with a clear error under a different CA, and the explicit
//! insecure switch.

use crate::support::vcd::*;
use vcd_ccm::vcd::{ClientMetrics, VcdClient, VcdError};
use vcdsim::{Options, Scenario, Sim};

async fn tls_sim() -> Sim {
    let options = Options {
        tls: true,
        ..Default::default()
    };
    Sim::start_with(Scenario::default_scenario(), options)
        .await
        .unwrap()
}

#[tokio::test]
async fn the_simulators_ca_bundle_verifies_its_certificate() {
    let sim = tls_sim().await;
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("ca.pem");
    std::fs::write(&bundle, sim.ca_pem().unwrap()).unwrap();
    let mut cfg = config(&sim, tenant_token(&sim));
    cfg.tls.ca_bundle = Some(bundle);
    let client = connect(cfg).await;
    assert!(sim.base_url().starts_with("https://"));
    client.tenancy().current_org().await.unwrap();
}

#[tokio::test]
async fn another_ca_is_refused_with_a_clear_error() {
    let sim = tls_sim().await;
    let other = tls_sim().await;
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("other-ca.pem");
    std::fs::write(&bundle, other.ca_pem().unwrap()).unwrap();
    let mut cfg = config(&sim, tenant_token(&sim));
    cfg.tls.ca_bundle = Some(bundle);
    let error = VcdClient::connect(cfg, ClientMetrics::default())
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, VcdError::Tls { .. }), "{text}");
    assert!(
        text.contains("not trusted") && text.contains("CA bundle"),
        "{text}"
    );
    assert_eq!(total_calls(&sim), 0, "nothing reached the server");
}

#[tokio::test]
async fn a_missing_or_empty_bundle_is_a_configuration_error() {
    let sim = tls_sim().await;
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(&sim, tenant_token(&sim));
    cfg.tls.ca_bundle = Some(dir.path().join("absent.pem"));
    let error = VcdClient::connect(cfg.clone(), ClientMetrics::default())
        .await
        .unwrap_err();
    assert!(matches!(error, VcdError::TlsConfig(_)), "{error}");
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    cfg.tls.ca_bundle = Some(empty);
    let error = VcdClient::connect(cfg, ClientMetrics::default())
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("holds no certificate"),
        "{error}"
    );
}

#[tokio::test]
async fn the_insecure_switch_skips_verification() {
    let sim = tls_sim().await;
    let mut cfg = config(&sim, tenant_token(&sim));
    cfg.tls.insecure = true;
    connect(cfg).await.tenancy().current_org().await.unwrap();
}

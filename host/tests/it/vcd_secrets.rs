//! No secret reaches the logs: a run with every kind of credential, token
//! refreshes, failures and retries, with all tracing output captured at
//! TRACE level, must not contain any password, API token or access token.

use crate::support::alone::run_alone;
use crate::support::capture::Captured;
use crate::support::vcd::*;
use vcd_ccm::vcd::{ClientMetrics, Credentials, Secret, VcdClient};
use vcdsim::{FaultAction, FaultRule};

/// Runs in a process of its own: the capture needs tracing to itself.
#[test]
fn no_secret_appears_in_any_log_line_or_error() {
    if !run_alone("vcd_secrets::no_secret_appears_in_any_log_line_or_error") {
        return;
    }
    // A current-thread runtime keeps every task on the thread whose default
    // subscriber captures the output.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(capture_a_run_and_find_no_secret());
}

async fn capture_a_run_and_find_no_secret() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(captured.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let sim = sim().await;
    let tenant = sim.tenant().unwrap().clone();
    let system = sim.system().unwrap().clone();
    let mut errors = Vec::new();

    let token_client = tenant_client(&sim).await;
    let password_client = connect(config(&sim, tenant_password(&sim))).await;
    let system_client = connect(config(&sim, system_token(&sim))).await;
    for client in [&token_client, &password_client, &system_client] {
        let placement = client.tenancy().placement("vdc1", "net1").await.unwrap();
        client
            .gateways()
            .used_ip_addresses(&placement.gateway.id)
            .await
            .unwrap();
        tracing::debug!(?placement, "a placement logged in full");
    }
    // Refreshes after revocation, and failures with retries.
    sim.with_world(|world| {
        world
            .access_tokens
            .values_mut()
            .for_each(|t| t.revoked = true)
    });
    sim.add_fault(
        FaultRule::new(
            Some("GET"),
            "*",
            FaultAction::Error {
                status: 503,
                minor_error_code: "X".into(),
                message: String::new(),
            },
        )
        .times(3),
    );
    token_client.tenancy().current_org().await.unwrap();
    password_client.tenancy().current_org().await.unwrap();
    let wrong_password = Credentials::Password {
        org: tenant.org.clone(),
        user: tenant.user.clone(),
        password: Secret::new("wrong-password-value-42"),
    };
    let refused = VcdClient::connect(
        config(&sim, wrong_password.clone()),
        ClientMetrics::default(),
    )
    .await;
    errors.push(format!(
        "{:?} {}",
        refused.as_ref().err(),
        refused
            .as_ref()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    ));
    errors.push(format!(
        "{wrong_password:?} {:?}",
        config(&sim, tenant_token(&sim))
    ));

    let access_tokens: Vec<String> =
        sim.with_world(|world| world.access_tokens.keys().cloned().collect());
    assert!(access_tokens.len() >= 5);
    let mut secrets = vec![
        tenant.password.clone(),
        tenant.api_token.clone().unwrap(),
        system.password.clone(),
        system.api_token.clone().unwrap(),
        "wrong-password-value-42".to_string(),
    ];
    secrets.extend(access_tokens);

    let logs = captured.text();
    assert!(logs.contains("logging in to VCD"), "the capture works");
    assert!(logs.lines().count() > 50, "TRACE output was captured");
    for secret in &secrets {
        assert!(
            !logs.contains(secret.as_str()),
            "a secret leaked into the logs"
        );
        for text in &errors {
            assert!(
                !text.contains(secret.as_str()),
                "a secret leaked into an error: {text}"
            );
        }
    }
}

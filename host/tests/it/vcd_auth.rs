//! Logins and the token cache against vcdsim: tenant and provider
//! credentials, refresh on expiry and on 401 (once for many callers),
//! credential files re-read on change, and refused credentials.

use std::sync::Arc;
use std::time::Duration;

use crate::support::vcd::*;
use vcd_ccm::vcd::{ClientMetrics, CredentialSource, Credentials, Secret, VcdClient, VcdError};

#[tokio::test]
async fn tenant_api_token_logs_in_through_the_tenant_oauth_endpoint() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    assert!(!client.is_provider());
    let org = client.tenancy().current_org().await.unwrap();
    assert_eq!(org.name.as_deref(), Some("org1"));
    assert_eq!(sim.count("POST /oauth/tenant/{org}/token"), 1);
    assert_eq!(sim.count("POST /oauth/provider/token"), 0);
}

#[tokio::test]
async fn tenant_password_opens_a_basic_session() {
    let sim = sim().await;
    let client = connect(config(&sim, tenant_password(&sim))).await;
    client.tenancy().current_org().await.unwrap();
    assert_eq!(sim.count("POST /cloudapi/1.0.0/sessions"), 1);
}

#[tokio::test]
async fn provider_credentials_act_on_the_tenant_through_the_tenant_context() {
    let sim = sim_from(vcdsim::Scenario::two_orgs()).await;
    let client = connect(config(&sim, system_token(&sim))).await;
    assert!(client.is_provider());
    assert_eq!(sim.count("POST /oauth/provider/token"), 1);
    let placement = placement_of(&client).await;
    // The provider sees every org's gateways; the tenant context narrows
    // lists to org1, so exactly org1's gateway is found by the network.
    let request = sim.requests();
    let networks = request
        .iter()
        .find(|e| e.template == "/cloudapi/1.0.0/orgVdcNetworks")
        .expect("a network lookup");
    assert_eq!(networks.status, 200);
    assert_eq!(placement.org.name.as_deref(), Some("org1"));
    assert!(
        placement
            .gateway
            .org_ref
            .as_ref()
            .is_some_and(|o| o.id == placement.org.id)
    );

    let password = sim.system().unwrap();
    let basic = Credentials::Password {
        org: "System".into(),
        user: password.user.clone(),
        password: Secret::new(password.password.clone()),
    };
    connect(config(&sim, basic)).await;
    assert_eq!(sim.count("POST /cloudapi/1.0.0/sessions/provider"), 1);
}

async fn placement_of(client: &VcdClient) -> vcd_ccm::vcd::resources::network::Placement {
    client.tenancy().placement("vdc1", "net1").await.unwrap()
}

#[tokio::test]
async fn a_revoked_token_is_refreshed_once_for_fifty_concurrent_callers() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    client.tenancy().current_org().await.unwrap();
    assert_eq!(login_calls(&sim), 1);
    // Every live access token dies at once, as when VCD ends sessions.
    sim.with_world(|world| {
        for token in world.access_tokens.values_mut() {
            token.revoked = true;
        }
    });
    let calls = (0..50).map(|_| {
        let client = client.clone();
        tokio::spawn(async move { client.tenancy().current_org().await })
    });
    for call in calls {
        call.await
            .unwrap()
            .expect("each caller succeeds after the refresh");
    }
    assert_eq!(login_calls(&sim), 2, "one refresh for all 50 callers");
}

#[tokio::test]
async fn a_token_near_expiry_is_refreshed_before_vcd_rejects_it() {
    let sim = sim().await;
    sim.set_knobs(|k| k.token_ttl_ms = 2_000);
    let (client, registry) = client_with_registry(config(&sim, tenant_token(&sim))).await;
    client.tenancy().current_org().await.unwrap();
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    client.tenancy().current_org().await.unwrap();
    assert_eq!(login_calls(&sim), 2);
    assert_eq!(
        metric_sum(&registry, "vcd_token_refreshes_total", &["expiring"]),
        1.0
    );
    let unauthorized = sim.requests().iter().filter(|e| e.status == 401).count();
    assert_eq!(unauthorized, 0, "the refresh happened before expiry");
}

#[tokio::test]
async fn credential_files_are_reread_when_they_change() {
    let sim = sim().await;
    let dir = tempfile::tempdir().unwrap();
    let tenant = sim.tenant().unwrap().clone();
    std::fs::write(
        dir.path().join("username"),
        format!("{}/{}\n", tenant.org, tenant.user),
    )
    .unwrap();
    std::fs::write(dir.path().join("password"), "wrong\n").unwrap();
    std::fs::write(dir.path().join("refreshToken"), "").unwrap();
    let mut cfg = config(&sim, tenant_token(&sim));
    cfg.credentials = CredentialSource::Files {
        dir: dir.path().to_path_buf(),
        user_org: tenant.org.clone(),
    };
    let refused = VcdClient::connect(cfg.clone(), ClientMetrics::default()).await;
    assert!(
        matches!(refused, Err(VcdError::Unauthorized { .. })),
        "{refused:?}"
    );

    std::fs::write(
        dir.path().join("password"),
        format!("{}\n", tenant.password),
    )
    .unwrap();
    let client = connect(cfg).await;
    client.tenancy().current_org().await.unwrap();
    let sessions = sim.count("POST /cloudapi/1.0.0/sessions");

    // Rotate to an API token: the next call logs in with it.
    tokio::time::sleep(Duration::from_millis(20)).await;
    std::fs::write(
        dir.path().join("refreshToken"),
        tenant.api_token.clone().unwrap(),
    )
    .unwrap();
    client.tenancy().current_org().await.unwrap();
    assert_eq!(sim.count("POST /cloudapi/1.0.0/sessions"), sessions);
    assert_eq!(sim.count("POST /oauth/tenant/{org}/token"), 1);
}

#[tokio::test]
async fn refused_credentials_say_what_to_check() {
    let sim = sim().await;
    let wrong = Credentials::ApiToken {
        org: "org1".into(),
        token: Secret::new("not-a-token"),
    };
    let error = VcdClient::connect(config(&sim, wrong), ClientMetrics::default())
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("login (POST /oauth/tenant/org1/token)"),
        "{text}"
    );
    assert!(text.contains("invalid_grant"), "{text}");
    assert!(!text.contains("not-a-token"), "{text}");
}

#[tokio::test]
async fn a_warm_token_costs_no_login_per_call() {
    let sim = sim().await;
    let client = Arc::new(tenant_client(&sim).await);
    for _ in 0..20 {
        client.tenancy().current_org().await.unwrap();
    }
    assert_eq!(login_calls(&sim), 1);
}

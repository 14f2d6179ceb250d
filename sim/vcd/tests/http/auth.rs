use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use vcdsim::Scenario;

use crate::support::{CLOUDAPI, Client, start};

#[tokio::test]
async fn versions_need_no_token_and_list_37_2() {
    let sim = start(Scenario::default_scenario()).await;
    let reply = Client::anonymous(&sim).get("/api/versions").await;
    assert_eq!(reply.status, StatusCode::OK);
    let versions: Vec<&str> = reply.body["versionInfo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert!(versions.contains(&"37.2"), "{versions:?}");
    assert!(
        reply
            .header("content-type")
            .unwrap()
            .starts_with("application/vnd.vmware.vcloud.versions+json")
    );
}

pub async fn refresh(sim: &vcdsim::Sim, path: &str, token: &str) -> (StatusCode, Value) {
    let response = crate::support::http()
        .post(format!("{}{path}", sim.base_url()))
        .form(&[("grant_type", "refresh_token"), ("refresh_token", token)])
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

#[tokio::test]
async fn refresh_token_grants_per_org() {
    let sim = start(Scenario::default_scenario()).await;
    let tenant_token = sim.tenant().unwrap().api_token.clone().unwrap();
    let system_token = sim.system().unwrap().api_token.clone().unwrap();

    let (status, body) = refresh(&sim, "/oauth/tenant/org1/token", &tenant_token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert!(body["refresh_token"].is_null());
    let access = body["access_token"].as_str().unwrap();
    assert!(access.len() > 32);
    let mut client = Client::anonymous(&sim);
    client.token = Some(access.to_string());
    assert_eq!(client.get("/api/org").await.status, StatusCode::OK);

    // The provider endpoint must reject a tenant's token (the CPI relies on it).
    let (status, body) = refresh(&sim, "/oauth/provider/token", &tenant_token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_grant");
    let (status, _) = refresh(&sim, "/oauth/tenant/org2/token", &tenant_token).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = refresh(&sim, "/oauth/tenant/org1/token", "no-such-token").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = refresh(&sim, "/oauth/provider/token", &system_token).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn basic_sessions_check_credentials_and_endpoint() {
    let sim = start(Scenario::default_scenario()).await;
    let tenant = Client::tenant(&sim).await;
    let session = tenant.ok("/sessions/current").await;
    assert_eq!(session["org"]["name"], "org1");
    assert_eq!(session["user"]["name"], "k8s-cpi");
    assert!(session["roleRefs"].is_array());

    let post = |path: &'static str, login: &'static str, password: &'static str| {
        let sim_url = sim.base_url().to_string();
        async move {
            crate::support::http()
                .post(format!("{sim_url}{CLOUDAPI}{path}"))
                .basic_auth(login, Some(password))
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    assert_eq!(
        post("/sessions", "k8s-cpi@org1", "wrong").await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        post("/sessions/provider", "k8s-cpi@org1", "k8s-cpi-password").await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        post("/sessions", "admin@System", "admin-password").await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        post("/sessions/provider", "system/admin", "admin-password").await,
        StatusCode::OK
    );
    assert_eq!(
        post("/sessions", "org1/k8s-cpi", "k8s-cpi-password").await,
        StatusCode::OK
    );
}

#[tokio::test]
async fn missing_expired_idle_and_logged_out_tokens_get_401() {
    let sim = start(Scenario::default_scenario()).await;
    let anonymous = Client::anonymous(&sim);
    let reply = anonymous.get(&format!("{CLOUDAPI}/edgeGateways")).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(reply.minor(), "UNAUTHORIZED");

    sim.set_knobs(|k| k.token_ttl_ms = 1000);
    let short = Client::tenant(&sim).await;
    assert_eq!(
        short.get(&format!("{CLOUDAPI}/edgeGateways")).await.status,
        StatusCode::OK
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let reply = short.get(&format!("{CLOUDAPI}/edgeGateways")).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        short.get("/api/query?type=vm").await.status,
        StatusCode::UNAUTHORIZED
    );

    sim.set_knobs(|k| {
        k.token_ttl_ms = 60_000;
        k.idle_timeout_ms = 300;
    });
    let idle = Client::tenant(&sim).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(
        idle.get(&format!("{CLOUDAPI}/orgs")).await.status,
        StatusCode::UNAUTHORIZED
    );

    sim.set_knobs(|k| k.idle_timeout_ms = 60_000);
    let client = Client::tenant(&sim).await;
    assert_eq!(
        client
            .delete(&format!("{CLOUDAPI}/sessions/current"))
            .await
            .status,
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        client.get(&format!("{CLOUDAPI}/orgs")).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn every_token_header_form_is_accepted() {
    let sim = start(Scenario::default_scenario()).await;
    let token = Client::tenant(&sim).await.token.unwrap();
    let url = format!("{}{CLOUDAPI}/orgs", sim.base_url());
    for (name, value) in [
        ("authorization", format!("bearer {token}")),
        ("x-vmware-vcloud-access-token", token.clone()),
        ("x-vcloud-authorization", token.clone()),
    ] {
        let status = crate::support::http()
            .get(&url)
            .header(name, value)
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::OK, "{name}");
    }
}

#[tokio::test]
async fn unsupported_accept_version_gets_406_and_version_is_echoed() {
    let mut scenario = Scenario::default_scenario();
    scenario.api_versions.insert(0, "36.0".into());
    let sim = start(scenario).await;
    let token = Client::tenant(&sim).await.token.unwrap();
    let url = format!("{}{CLOUDAPI}/orgs", sim.base_url());
    let get = |accept: &'static str| {
        let (url, token) = (url.clone(), token.clone());
        async move {
            crate::support::http()
                .get(url)
                .bearer_auth(token)
                .header("accept", accept)
                .send()
                .await
                .unwrap()
        }
    };
    assert_eq!(
        get("application/json;version=99.0").await.status(),
        StatusCode::NOT_ACCEPTABLE
    );
    // A version the scenario does not list is refused as well.
    assert_eq!(
        get("application/json;version=37.0").await.status(),
        StatusCode::NOT_ACCEPTABLE
    );
    let response = get("application/json;version=36.0").await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "application/json;version=36.0"
    );
}

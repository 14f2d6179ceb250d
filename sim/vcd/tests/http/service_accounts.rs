//! Service accounts: one-time refresh tokens at the tenant token endpoint.

use reqwest::StatusCode;
use vcdsim::Scenario;

use crate::auth::refresh;
use crate::support::{Client, start};

const SCENARIO: &str = "
orgs:
  - name: org1
    users: [{name: admin, password: pw}]
  - name: org2
serviceAccounts:
  - {name: ccm, org: org1, roles: [Organization Administrator], refreshToken: sa-first, accessTokenTtlMs: 3000}
";

#[tokio::test]
async fn each_exchange_answers_the_next_token_and_voids_the_used_one() {
    let sim = start(Scenario::from_yaml(SCENARIO).unwrap()).await;
    let path = "/oauth/tenant/org1/token";
    let (status, body) = refresh(&sim, "/oauth/tenant/org2/token", "sa-first").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "another org's endpoint");
    let (status, body2) = refresh(&sim, path, "sa-first").await;
    assert_eq!(status, StatusCode::OK, "{body} {body2}");
    assert_eq!(body2["expires_in"], 3);
    let second = body2["refresh_token"].as_str().unwrap().to_string();
    assert_ne!(second, "sa-first");
    let mut client = Client::anonymous(&sim);
    client.token = Some(body2["access_token"].as_str().unwrap().to_string());
    assert_eq!(client.get("/api/org").await.status, StatusCode::OK);

    let (status, body) = refresh(&sim, path, "sa-first").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "invalid_grant");
    let (status, body) = refresh(&sim, path, &second).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(body["refresh_token"], second.as_str());

    let (exchanges, reuses) = sim.with_world(|w| {
        let account = vcdsim::world::service_account::find_account(w, "ccm").unwrap();
        (account.exchanges, account.reuses)
    });
    assert_eq!((exchanges, reuses), (2, 1));
    let issued = sim
        .with_world(|w| vcdsim::world::service_account::issue_token(w, "ccm"))
        .unwrap();
    let (status, _) = refresh(&sim, path, body["refresh_token"].as_str().unwrap()).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "an admin's new token voids the old"
    );
    assert_eq!(refresh(&sim, path, &issued).await.0, StatusCode::OK);
}

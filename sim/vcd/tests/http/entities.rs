use reqwest::{Method, StatusCode};
use serde_json::json;
use vcdsim::Scenario;

use crate::support::{CLOUDAPI, Client, start};

const TYPE: &str = "urn:vcloud:type:vmware:capvcdCluster:1.3.0";

#[tokio::test]
async fn etag_if_match_and_412() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let page = client
        .ok("/entities/types/vmware/capvcdCluster/1.3.0")
        .await;
    assert_eq!(page["resultTotal"], 1);
    let id = page["values"][0]["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("urn:vcloud:entity:vmware:capvcdCluster:"));
    let path = format!("{CLOUDAPI}/entities/{id}");
    let url = format!("{}{path}", sim.base_url());

    let first = client.get(&path).await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(first.body["entityType"], TYPE);
    let etag = first.header("etag").unwrap().to_string();
    let mut body = first.body.clone();
    body["entity"]["status"]["cpi"] = json!({"virtualIPs": ["203.0.113.20"]});

    let put = |if_match: String, body: serde_json::Value| {
        let (http, url, token) = (
            client.http.clone(),
            url.clone(),
            client.token.clone().unwrap(),
        );
        async move {
            http.put(url)
                .bearer_auth(token)
                .header("if-match", if_match)
                .json(&body)
                .send()
                .await
                .unwrap()
        }
    };
    let updated = put(etag.clone(), body.clone()).await;
    assert_eq!(updated.status(), StatusCode::OK);
    let new_etag = updated.headers()["etag"].to_str().unwrap().to_string();
    assert_ne!(new_etag, etag);
    let stale = put(etag, body.clone()).await;
    assert_eq!(stale.status(), StatusCode::PRECONDITION_FAILED);
    let read = client.get(&path).await;
    assert_eq!(read.header("etag"), Some(new_etag.as_str()));
    assert_eq!(
        read.body["entity"]["status"]["cpi"]["virtualIPs"][0],
        "203.0.113.20"
    );

    assert_eq!(client.delete(&path).await.status, StatusCode::NO_CONTENT);
    assert_eq!(client.get(&path).await.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn entities_are_created_by_task_and_isolated_by_org() {
    let sim = start(Scenario::two_orgs()).await;
    let alice = Client::login(&sim, "alice", "org1", "alice-password").await;
    let bob = Client::login(&sim, "bob", "org2", "bob-password").await;
    let body = json!({"name": "cluster-x", "entity": {"spec": {}}});
    let id = alice
        .write_ok(Method::POST, &format!("/entityTypes/{TYPE}"), Some(&body))
        .await;
    let entity = alice.ok(&format!("/entities/{id}")).await;
    assert_eq!(entity["name"], "cluster-x");
    assert_eq!(entity["org"]["name"], "org1");
    assert_eq!(
        bob.get(&format!("{CLOUDAPI}/entities/{id}")).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        bob.ok("/entities/types/vmware/capvcdCluster/1.3.0").await["resultTotal"],
        0
    );
    let bad_type = alice
        .post(
            &format!("{CLOUDAPI}/entityTypes/urn:vcloud:type:bad"),
            &body,
        )
        .await;
    assert_eq!(bad_type.status, StatusCode::BAD_REQUEST);
}

use reqwest::StatusCode;
use serde_json::json;
use vcdsim::Scenario;

use crate::support::{CLOUDAPI, Client, start};

fn names(page: &serde_json::Value) -> Vec<String> {
    page["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn tenants_see_only_their_org() {
    let sim = start(Scenario::two_orgs()).await;
    let alice = Client::login(&sim, "alice", "org1", "alice-password").await;
    let bob = Client::login(&sim, "bob", "org2", "bob-password").await;

    assert_eq!(names(&alice.ok("/edgeGateways").await), ["edge1"]);
    assert_eq!(names(&bob.ok("/edgeGateways").await), ["edge2"]);
    assert_eq!(names(&alice.ok("/orgVdcNetworks").await), ["net1"]);
    assert_eq!(names(&alice.ok("/orgs").await), ["org1"]);
    assert_eq!(names(&alice.ok("/vdcs").await), ["vdc1"]);
    let certs = alice.ok("/ssl/certificateLibrary").await;
    assert_eq!(certs["values"].as_array().unwrap().len(), 1);
    assert_eq!(certs["values"][0]["alias"], "org1-cert");
    let vms = alice.get("/api/query?type=vm").await.body;
    assert_eq!(vms["total"], 1);
    assert_eq!(vms["record"][0]["name"], "node-a");

    // By id, another org's objects are 403 ACCESS_TO_RESOURCE_IS_FORBIDDEN.
    let edge2 = bob.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for path in [
        format!("/edgeGateways/{edge2}"),
        format!("/edgeGateways/{edge2}/usedIpAddresses"),
        format!("/edgeGateways/{edge2}/nat/rules"),
        format!("/edgeGateways/{edge2}/loadBalancer/poolSummaries"),
    ] {
        let reply = alice.get(&format!("{CLOUDAPI}{path}")).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{path}");
        assert_eq!(reply.minor(), "ACCESS_TO_RESOURCE_IS_FORBIDDEN");
    }
    let org2_cert = bob.ok("/ssl/certificateLibrary").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        alice
            .get(&format!("{CLOUDAPI}/ssl/certificateLibrary/{org2_cert}"))
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let pool = json!({"name": "p", "gatewayRef": {"id": edge2}, "members": []});
    assert_eq!(
        alice
            .post(&format!("{CLOUDAPI}/loadBalancer/pools"), &pool)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn tenant_context_narrows_sysadmin_and_is_checked_for_tenants() {
    let sim = start(Scenario::two_orgs()).await;
    let mut admin = Client::system(&sim).await;
    assert_eq!(names(&admin.ok("/edgeGateways").await), ["edge1", "edge2"]);
    let orgs = admin.ok("/orgs?filter=name==org2").await;
    let org2 = orgs["values"][0]["id"].as_str().unwrap().to_string();
    admin.tenant_context = Some(org2.clone());
    assert_eq!(names(&admin.ok("/edgeGateways").await), ["edge2"]);
    // The bare UUID form is accepted too.
    admin.tenant_context = Some(org2.rsplit(':').next().unwrap().to_string());
    assert_eq!(names(&admin.ok("/edgeGateways").await), ["edge2"]);

    let mut alice = Client::login(&sim, "alice", "org1", "alice-password").await;
    alice.tenant_context = Some(org2);
    let reply = alice.get(&format!("{CLOUDAPI}/edgeGateways")).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(reply.minor(), "ACCESS_TO_RESOURCE_IS_FORBIDDEN");
}

#[tokio::test]
async fn provider_operations_reject_tenants() {
    let sim = start(Scenario::default_scenario()).await;
    let tenant = Client::tenant(&sim).await;
    let edge = tenant.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("{CLOUDAPI}/edgeGateways/{edge}/loadBalancer");
    let config = tenant
        .ok(&format!("/edgeGateways/{edge}/loadBalancer"))
        .await;
    assert_eq!(config["enabled"], true);
    let reply = tenant.put(&path, &json!({"enabled": false})).await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(
        tenant.get("/api/query?type=adminVM").await.status,
        StatusCode::FORBIDDEN
    );

    let admin = Client::system(&sim).await;
    let task = admin
        .write(
            reqwest::Method::PUT,
            &format!("/edgeGateways/{edge}/loadBalancer"),
            Some(&json!({"enabled": false})),
        )
        .await;
    assert_eq!(task["status"], "success");
    assert_eq!(
        tenant
            .ok(&format!("/edgeGateways/{edge}/loadBalancer"))
            .await["enabled"],
        false
    );
    // With the load balancer off, pools are refused.
    let pool = json!({"name": "p", "gatewayRef": {"id": edge}, "members": []});
    let reply = tenant
        .post(&format!("{CLOUDAPI}/loadBalancer/pools"), &pool)
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
}

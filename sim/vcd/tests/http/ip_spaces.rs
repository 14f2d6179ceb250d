use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, start};

struct Setup {
    client: Client,
    gateway: String,
    space: String,
}

async fn setup(sim: &vcdsim::Sim) -> Setup {
    let client = Client::tenant(sim).await;
    let gateway = client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let suggestions = client
        .ok(&format!(
            "/ipSpaces/floatingIpSuggestions?filter=gatewayId=={gateway}"
        ))
        .await;
    let space = suggestions["values"][0]["ipSpaceRef"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    Setup {
        client,
        gateway,
        space,
    }
}

impl Setup {
    async fn allocate(&self, body: Value) -> Value {
        self.client
            .write(
                Method::POST,
                &format!("/ipSpaces/{}/allocate", self.space),
                Some(&body),
            )
            .await
    }

    async fn allocation(&self, ip: &str) -> Value {
        let page = self
            .client
            .ok(&format!(
                "/ipSpaces/{}/allocations?filter=value=={ip};type==FLOATING_IP",
                self.space
            ))
            .await;
        assert_eq!(page["resultTotal"], 1, "{page}");
        page["values"][0].clone()
    }
}

#[tokio::test]
async fn allocate_claim_and_release_a_floating_ip() {
    let sim = start(Scenario::ip_space()).await;
    let s = setup(&sim).await;
    let gateway = s.client.ok(&format!("/edgeGateways/{}", s.gateway)).await;
    assert_eq!(gateway["edgeGatewayUplinks"][0]["usingIpSpace"], true);
    let space = s.client.ok(&format!("/ipSpaces/{}", s.space)).await;
    assert_eq!(space["type"], "PUBLIC");
    assert_eq!(space["ipSpaceRanges"]["defaultFloatingIpQuota"], 3);
    let suggestions = s
        .client
        .ok(&format!(
            "/ipSpaces/floatingIpSuggestions?filter=gatewayId=={}",
            s.gateway
        ))
        .await;
    assert_eq!(suggestions["values"][0]["unusedValues"], json!([]));

    let task = s
        .allocate(json!({"type": "FLOATING_IP", "quantity": 1}))
        .await;
    assert_eq!(task["status"], "success", "{task}");
    let result: Value =
        serde_json::from_str(task["result"]["resultContent"].as_str().unwrap()).unwrap();
    let ip = result[0]["value"].as_str().unwrap().to_string();
    assert_eq!(ip, "192.0.2.10");
    assert!(
        result[0]["id"]
            .as_str()
            .unwrap()
            .starts_with("urn:vcloud:ipSpaceIpAllocation:")
    );
    let suggestions = s
        .client
        .ok(&format!(
            "/ipSpaces/floatingIpSuggestions?filter=gatewayId=={}",
            s.gateway
        ))
        .await;
    assert_eq!(suggestions["values"][0]["unusedValues"], json!([ip]));

    let mut allocation = s.allocation(&ip).await;
    assert_eq!(allocation["usageState"], "UNUSED");
    assert!(allocation["orgRef"]["id"].is_string());
    let path = format!(
        "/ipSpaces/{}/allocations/{}",
        s.space,
        allocation["id"].as_str().unwrap()
    );
    allocation["usageState"] = json!("USED_MANUAL");
    allocation["description"] = json!("cluster-c1-namespace-ns-service-web");
    s.client
        .write_ok(Method::PUT, &path, Some(&allocation))
        .await;
    let claimed = s
        .client
        .ok(&format!(
            "/ipSpaces/{}/allocations?filter=usageState==USED_MANUAL;type==FLOATING_IP",
            s.space
        ))
        .await;
    assert_eq!(
        claimed["values"][0]["description"],
        "cluster-c1-namespace-ns-service-web"
    );

    // A VS on the IP marks the space's allocation; USED_MANUAL wins.
    let alb = Alb::discover(&s.client, "edge1").await;
    let pool = s
        .client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;
    let vs = s
        .client
        .write_ok(
            Method::POST,
            "/loadBalancer/virtualServices",
            Some(&alb.virtual_service("vs", &pool, &ip, 80)),
        )
        .await;
    let used = s
        .client
        .ok(&format!("/edgeGateways/{}/usedIpAddresses", s.gateway))
        .await;
    assert!(
        used["values"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["ipAddress"] == ip.as_str())
    );
    assert_eq!(s.allocation(&ip).await["usageState"], "USED_MANUAL");
    assert_eq!(
        s.allocation(&ip).await["usageCategories"],
        json!(["LOAD_BALANCER"])
    );

    // Set UNUSED while the VS holds it: the state is USED, and cannot be released.
    let mut unclaim = s.allocation(&ip).await;
    unclaim["usageState"] = json!("UNUSED");
    unclaim["description"] = json!("");
    s.client.write_ok(Method::PUT, &path, Some(&unclaim)).await;
    let held = s.allocation(&ip).await;
    assert_eq!(held["usageState"], "USED");
    assert_eq!(held["usedByRef"]["id"], s.gateway.as_str());
    let refused = s.client.delete(&format!("{CLOUDAPI}{path}")).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);

    s.client
        .write_ok(
            Method::DELETE,
            &format!("/loadBalancer/virtualServices/{vs}"),
            None,
        )
        .await;
    s.client.write_ok(Method::DELETE, &path, None).await;
    let page = s
        .client
        .ok(&format!("/ipSpaces/{}/allocations", s.space))
        .await;
    assert_eq!(page["resultTotal"], 0);
}

#[tokio::test]
async fn quota_and_exhaustion_end_the_allocate_task_in_error() {
    let sim = start(Scenario::ip_space()).await;
    let s = setup(&sim).await;
    let task = s
        .allocate(json!({"type": "FLOATING_IP", "quantity": 3}))
        .await;
    assert_eq!(task["status"], "success");
    let over_quota = s
        .allocate(json!({"type": "FLOATING_IP", "quantity": 1}))
        .await;
    assert_eq!(over_quota["status"], "error");
    assert!(
        over_quota["error"]["message"]
            .as_str()
            .unwrap()
            .contains("quota"),
        "{over_quota}"
    );

    // Raise the quota: the space has 5 addresses, so 2 more fit and the 6th does not.
    sim.with_world(|w| w.ip_spaces[0].default_floating_ip_quota = 100);
    assert_eq!(
        s.allocate(json!({"type": "FLOATING_IP", "quantity": 2}))
            .await["status"],
        "success"
    );
    let exhausted = s
        .allocate(json!({"type": "FLOATING_IP", "quantity": 1}))
        .await;
    assert_eq!(exhausted["status"], "error");
    assert!(
        exhausted["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no free"),
        "{exhausted}"
    );
    let space = s.client.ok(&format!("/ipSpaces/{}", s.space)).await;
    assert_eq!(space["utilization"]["floatingIPs"]["allocatedCount"], "5");
}

#[tokio::test]
async fn specific_values_and_invalid_requests() {
    let sim = start(Scenario::ip_space()).await;
    let s = setup(&sim).await;
    let task = s
        .allocate(json!({"type": "FLOATING_IP", "value": "192.0.2.13"}))
        .await;
    assert_eq!(task["status"], "success");
    assert_eq!(
        s.allocate(json!({"type": "FLOATING_IP", "value": "192.0.2.13"}))
            .await["status"],
        "error"
    );
    assert_eq!(
        s.allocate(json!({"type": "FLOATING_IP", "value": "10.9.9.9"}))
            .await["status"],
        "error"
    );
    let path = format!("{CLOUDAPI}/ipSpaces/{}/allocate", s.space);
    assert_eq!(
        s.client
            .post(&path, &json!({"type": "IP_PREFIX", "quantity": 1}))
            .await
            .status,
        StatusCode::BAD_REQUEST
    );
    let missing = s
        .client
        .get(&format!("{CLOUDAPI}/ipSpaces/floatingIpSuggestions"))
        .await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);

    // A VIP from the space that the org did not allocate is refused.
    let alb = Alb::discover(&s.client, "edge1").await;
    let pool = s
        .client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;
    let reply = s
        .client
        .post(
            &format!("{CLOUDAPI}/loadBalancer/virtualServices"),
            &alb.virtual_service("vs", &pool, "192.0.2.11", 80),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn suggestions_on_an_ip_block_gateway_are_403() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let gateway = client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let reply = client
        .get(&format!(
            "{CLOUDAPI}/ipSpaces/floatingIpSuggestions?filter=gatewayId=={gateway}"
        ))
        .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(client.ok("/ipSpaces/summaries").await["resultTotal"], 0);
}

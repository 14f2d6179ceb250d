//! IPv6 IP Spaces: an IPv6 space beside an IPv4 one on gateway `edge2`,
//! floating-IP allocation, suggestions by `ipType`, and IPv6 VIPs backed by
//! allocations. Every body exchanged validates against the 37.2 spec.

use reqwest::Method;
use serde_json::{Value, json};
use vcdsim::{Scenario, Sim};

use crate::conformance::assert_conforms;
use crate::ipv6::{VS, create_vs, entry, pool, refused, used, vs_body};
use crate::support::{Alb, CLOUDAPI, Client, find_named, start};

/// The IP Space gateway `edge2`, its spaces by name and a tenant client.
struct Spaces {
    client: Client,
    gateway: String,
    public4: String,
    public6: String,
}

impl Spaces {
    async fn discover(sim: &Sim) -> Self {
        let client = Client::tenant(sim).await;
        let gateways = client.ok("/edgeGateways?filter=name==edge2").await;
        let gateway = find_named(&gateways, "edge2")["id"]
            .as_str()
            .unwrap()
            .to_string();
        let spaces = client.ok("/ipSpaces/summaries").await;
        let id = |name| {
            find_named(&spaces, name)["id"]
                .as_str()
                .unwrap()
                .to_string()
        };
        let (public4, public6) = (id("public4"), id("public6"));
        Self {
            client,
            gateway,
            public4,
            public6,
        }
    }

    /// The allocate task's result values, or the task's error message.
    async fn allocate(&self, space: &str, body: Value) -> Result<Vec<String>, String> {
        let task = self
            .client
            .write(
                Method::POST,
                &format!("/ipSpaces/{space}/allocate"),
                Some(&body),
            )
            .await;
        if task["status"] != "success" {
            return Err(task["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string());
        }
        let result: Value =
            serde_json::from_str(task["result"]["resultContent"].as_str().unwrap()).unwrap();
        Ok(result
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["value"].as_str().unwrap().to_string())
            .collect())
    }

    /// The unused values suggested per space for `ipType`.
    async fn suggestions(&self, ip_type: Option<&str>) -> Vec<(String, Value)> {
        let filter = match ip_type {
            Some(t) => format!("gatewayId=={};ipType=={t}", self.gateway),
            None => format!("gatewayId=={}", self.gateway),
        };
        let page = self
            .client
            .ok(&format!("/ipSpaces/floatingIpSuggestions?filter={filter}"))
            .await;
        page["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["ipSpaceRef"]["name"].as_str().unwrap().to_string(),
                    s["unusedValues"].clone(),
                )
            })
            .collect()
    }

    async fn allocation(&self, ip: &str) -> Value {
        let page = self
            .client
            .ok(&format!(
                "/ipSpaces/{}/allocations?filter=value=={ip}",
                self.public6
            ))
            .await;
        assert_eq!(page["resultTotal"], 1, "{page}");
        page["values"][0].clone()
    }
}

#[tokio::test]
async fn ipv6_ip_spaces_allocate_and_back_vips_as_ipv4_ones_do() {
    let sim = start(Scenario::dual_stack()).await;
    let s = Spaces::discover(&sim).await;
    let admin = Client::system(&sim).await;
    let space = admin.ok(&format!("/ipSpaces/{}", s.public6)).await;
    assert_eq!(space["ipSpaceInternalScope"], json!(["2001:db8:6::/64"]));
    assert_eq!(space["ipSpaceExternalScope"], "::/0");
    let range = &space["ipSpaceRanges"]["ipRanges"][0];
    assert_eq!(range["startIpAddress"], "2001:db8:6::10");
    assert_eq!(range["endIpAddress"], "2001:db8:6::14");
    assert_eq!(range["totalIpCount"], "5");

    // By value (API 37.2) and without one, within the quota of 3.
    assert_eq!(
        s.allocate(
            &s.public6,
            json!({"type": "FLOATING_IP", "value": "2001:db8:6::12"})
        )
        .await,
        Ok(vec!["2001:db8:6::12".to_string()])
    );
    assert_eq!(
        s.allocate(&s.public6, json!({"type": "FLOATING_IP", "quantity": 2}))
            .await,
        Ok(vec![
            "2001:db8:6::10".to_string(),
            "2001:db8:6::11".to_string()
        ])
    );
    assert_eq!(
        s.allocate(&s.public6, json!({"type": "FLOATING_IP", "quantity": 1}))
            .await,
        Err(
            "The floating IP quota (3) of the organization in IP Space public6 is exhausted."
                .to_string()
        )
    );
    s.allocate(&s.public4, json!({"type": "FLOATING_IP", "quantity": 1}))
        .await
        .unwrap();
    assert_eq!(
        s.allocate(
            &s.public4,
            json!({"type": "FLOATING_IP", "value": "2001:db8:6::13"})
        )
        .await,
        Err("2001:db8:6::13 is not in IP Space public4.".to_string())
    );
    let reply = s
        .client
        .post(
            &format!("{CLOUDAPI}/ipSpaces/{}/allocate", s.public6),
            &json!({"type": "FLOATING_IP", "value": "2001:db8:6::g"}),
        )
        .await;
    refused(&reply, "'2001:db8:6::g' is not an IPv4 or IPv6 address");

    // Suggestions follow ipType.
    let v6 = json!(["2001:db8:6::12", "2001:db8:6::10", "2001:db8:6::11"]);
    assert_eq!(
        s.suggestions(Some("IPV6")).await,
        [("public6".to_string(), v6.clone())]
    );
    assert_eq!(
        s.suggestions(Some("IPV4")).await,
        [("public4".to_string(), json!(["192.0.2.10"]))]
    );
    assert_eq!(s.suggestions(None).await.len(), 2);

    // Strict: an IPv6 VIP of the space must be allocated to the org.
    let alb = Alb::discover(&s.client, "edge2").await;
    let pool = pool(&s.client, &alb).await;
    refused(
        &s.client
            .post(
                &format!("{CLOUDAPI}{VS}"),
                &vs_body(&alb, "vs", &pool, (None, Some("2001:db8:6::14")), 80),
            )
            .await,
        "2001:db8:6::14 is not allocated to the organization from an IP Space.",
    );
    create_vs(
        &s.client,
        &alb,
        "vs",
        &pool,
        (Some("192.0.2.10"), Some("2001:db8:6::12")),
        80,
    )
    .await;
    let allocation = s.allocation("2001:db8:6::12").await;
    assert_eq!(allocation["usageState"], "USED");
    assert_eq!(allocation["usageCategories"], json!(["LOAD_BALANCER"]));
    assert_eq!(allocation["usedByRef"]["name"], "edge2");
    assert_eq!(
        used(&s.client, &s.gateway).await,
        [
            entry("192.0.2.10", "Load_Balancer"),
            entry("2001:db8:6::12", "Load_Balancer")
        ]
    );

    // A manual claim with its description, as on IPv4.
    let mut claim = s.allocation("2001:db8:6::10").await;
    claim["usageState"] = json!("USED_MANUAL");
    claim["description"] = json!("cluster-c1-namespace-ns-service-web");
    let path = format!(
        "/ipSpaces/{}/allocations/{}",
        s.public6,
        claim["id"].as_str().unwrap()
    );
    s.client.write_ok(Method::PUT, &path, Some(&claim)).await;
    let claim = s.client.ok(&path).await;
    assert_eq!(claim["usageState"], "USED_MANUAL");
    assert_eq!(claim["description"], "cluster-c1-namespace-ns-service-web");
    assert_eq!(
        s.suggestions(Some("IPV6")).await,
        [("public6".to_string(), json!(["2001:db8:6::11"]))]
    );
    let summary = s
        .client
        .ok("/ipSpaces/summaries?filter=name==public6")
        .await;
    let floating = &summary["values"][0]["utilization"]["floatingIPs"];
    assert_eq!(
        (&floating["allocatedCount"], &floating["usedCount"]),
        (&json!("3"), &json!("2"))
    );
    assert_conforms(&sim);
}

/// Whether a PRIVATE IP Space's floating IP may be a VIP is not documented:
/// the strict reading holds one to the rule of the spaces the gateway
/// reaches, allocated to the org first.
#[tokio::test]
async fn a_private_space_address_is_a_vip_only_once_allocated() {
    let yaml = vcdsim::scenario::IP_SPACE_SCENARIO.replacen(
        "ipSpaces:\n",
        "ipSpaces:\n  - name: private1\n    type: PRIVATE\n    org: org1\n    ranges: [\"10.30.0.10-10.30.0.20\"]\n    internalScope: [\"10.30.0.0/24\"]\n",
        1,
    );
    let sim = start(Scenario::from_yaml(&yaml).unwrap()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let pool = pool(&client, &alb).await;
    let body = vs_body(&alb, "vs", &pool, (Some("10.30.0.12"), None), 80);
    refused(
        &client.post(&format!("{CLOUDAPI}{VS}"), &body).await,
        "10.30.0.12 is not allocated to the organization from an IP Space.",
    );
    let spaces = client.ok("/ipSpaces/summaries").await;
    let private = find_named(&spaces, "private1")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let reply = client
        .post(
            &format!("{CLOUDAPI}/ipSpaces/{private}/allocate"),
            &json!({"type": "FLOATING_IP", "value": "10.30.0.12"}),
        )
        .await;
    assert_eq!(reply.status.as_u16(), 202, "{}", reply.body);
    create_vs(&client, &alb, "vs", &pool, (Some("10.30.0.12"), None), 80).await;
    // An address outside every space stays an internal VIP, no allocation.
    create_vs(&client, &alb, "vs2", &pool, (Some("10.40.0.12"), None), 81).await;
}

//! vcdsim refuses what the CloudAPI spec's constraints refuse: from a
//! valid body of every request body kind it takes, the openapi module's
//! generator makes one body per constraint the body reaches (an array
//! over maxItems, a number under its minimum, a value outside an enum, a
//! required property removed, …); each is sent to a running vcdsim, which
//! must answer 400 naming the field's path and the constraint, log the
//! refusal, and change nothing. The embedded extract of the spec is used,
//! so the test needs no file beside the repository.

use std::collections::BTreeMap;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::openapi::{Spec, Violation};
use vcdsim::{Scenario, Sim};

use crate::firewall::ip_set;
use crate::support::{Alb, CLOUDAPI, Client, start};

/// A valid body of one kind, and where it goes.
struct Sample {
    kind: &'static str,
    method: Method,
    /// The path under `/cloudapi/1.0.0`.
    path: String,
    /// The route template vcdsim logs for it.
    template: &'static str,
    body: Value,
}

fn sample(kind: &'static str, method: Method, path: String, template: &str, body: Value) -> Sample {
    let template = Box::leak(format!("{CLOUDAPI}{template}").into_boxed_str());
    Sample {
        kind,
        method,
        path,
        template,
        body,
    }
}

/// Per body kind and constraint: generated and refused.
type Table = BTreeMap<(&'static str, &'static str), (usize, usize)>;

/// Sends every violation of `sample` and checks each refusal.
async fn refuse_all(sim: &Sim, client: &Client, sample: &Sample, table: &mut Table) {
    let violations = Violation::all_of(
        Spec::embedded(),
        sample.method.as_str(),
        sample.template,
        &sample.body,
    );
    assert!(
        !violations.is_empty(),
        "{}: no constraint reached",
        sample.kind
    );
    for violation in violations {
        let before = sim.dump();
        let reply = client
            .call(
                sample.method.clone(),
                &format!("{CLOUDAPI}{}", sample.path),
                Some(&violation.body),
            )
            .await;
        let entry = table
            .entry((sample.kind, violation.kind.keyword()))
            .or_default();
        entry.0 += 1;
        let what = format!("{} {} {}", sample.kind, violation.path, violation.kind);
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{what}: {}",
            reply.body
        );
        assert_eq!(reply.minor(), "BAD_REQUEST", "{what}");
        let message = reply.body["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&violation.expected),
            "{what}: wanted {:?} in {message}",
            violation.expected
        );
        assert!(
            message.contains(violation.kind.keyword()),
            "{what}: {message}"
        );
        assert_eq!(sim.dump(), before, "{what}: the refusal changed the world");
        let logged = sim.requests().pop().expect("the refusal is logged");
        assert_eq!(
            (logged.status, logged.template.as_str()),
            (400, sample.template),
            "{what}"
        );
        entry.1 += 1;
    }
}

fn print(table: &Table) {
    eprintln!(
        "{:<28} {:<10} {:>9} {:>8}",
        "body kind", "constraint", "generated", "refused"
    );
    for ((kind, constraint), (generated, refused)) in table {
        eprintln!("{kind:<28} {constraint:<10} {generated:>9} {refused:>8}");
    }
    let (generated, refused) = table.values().fold((0, 0), |(g, r), (a, b)| (g + a, r + b));
    eprintln!("{:<28} {:<10} {generated:>9} {refused:>8}", "total", "");
}

#[tokio::test]
async fn every_generated_violation_of_every_body_kind_is_refused() {
    let mut table = Table::new();
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let admin = Client::system(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    let pool_id = alb.create_pool(&client, "p").await;
    let vs = alb.virtual_service("v", &pool_id, "192.168.8.88", 80);
    let vs_id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;
    let vdc = client.ok("/vdcs").await["values"][0]["id"].clone();
    let session = client.ok("/sessions/current").await;
    let profile = json!({
        "name": "web", "scope": "TENANT", "orgRef": session["org"], "contextEntityId": vdc,
        "applicationPorts": [{"protocol": "TCP", "destinationPorts": ["80"]}],
    });
    let profile_id = client
        .write_ok(Method::POST, "/applicationPortProfiles", Some(&profile))
        .await;
    let nat = json!({
        "name": "dnat", "enabled": true, "ruleType": "DNAT", "externalAddresses": "203.0.113.21",
        "internalAddresses": "10.0.0.11", "priority": 0,
    });
    let nat_id = client
        .write_ok(
            Method::POST,
            &format!("/edgeGateways/{gw}/nat/rules"),
            Some(&nat),
        )
        .await;
    let group = ip_set(&alb.gateway, "s", &["10.0.0.1"]);
    let group_id = client
        .write_ok(Method::POST, "/firewallGroups", Some(&group))
        .await;
    let rules = json!({"userDefinedRules": [{
        "name": "r", "enabled": true, "actionValue": "ALLOW", "direction": "IN_OUT", "ipProtocol": "IPV4",
        "comments": "web", "sourceFirewallGroups": [{"id": group_id}],
    }]});
    client
        .write_ok(
            Method::PUT,
            &format!("/edgeGateways/{gw}/firewall/rules"),
            Some(&rules),
        )
        .await;
    let rule = client
        .ok(&format!("/edgeGateways/{gw}/firewall/rules"))
        .await["userDefinedRules"][0]
        .clone();
    let rule_id = rule["id"].as_str().unwrap().to_string();
    let cert_id = client.ok("/ssl/certificateLibrary").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let entity_id = client
        .ok("/entities/types/vmware/capvcdCluster/1.3.0")
        .await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let rde_type = "urn:vcloud:type:vmware:capvcdCluster:1.3.0";

    let mut tenant = vec![
        sample(
            "pool",
            Method::POST,
            "/loadBalancer/pools".into(),
            "/loadBalancer/pools",
            alb.pool("q", &["10.0.0.12"]),
        ),
        sample(
            "pool (PUT)",
            Method::PUT,
            format!("/loadBalancer/pools/{pool_id}"),
            "/loadBalancer/pools/{id}",
            client.ok(&format!("/loadBalancer/pools/{pool_id}")).await,
        ),
        sample(
            "virtual service",
            Method::POST,
            "/loadBalancer/virtualServices".into(),
            "/loadBalancer/virtualServices",
            alb.virtual_service("w", &pool_id, "192.168.8.89", 81),
        ),
        sample(
            "virtual service (PUT)",
            Method::PUT,
            format!("/loadBalancer/virtualServices/{vs_id}"),
            "/loadBalancer/virtualServices/{id}",
            client
                .ok(&format!("/loadBalancer/virtualServices/{vs_id}"))
                .await,
        ),
        sample(
            "NAT rule",
            Method::POST,
            format!("/edgeGateways/{gw}/nat/rules"),
            "/edgeGateways/{id}/nat/rules",
            nat.clone(),
        ),
        sample(
            "NAT rule (PUT)",
            Method::PUT,
            format!("/edgeGateways/{gw}/nat/rules/{nat_id}"),
            "/edgeGateways/{id}/nat/rules/{rule}",
            client
                .ok(&format!("/edgeGateways/{gw}/nat/rules/{nat_id}"))
                .await,
        ),
        sample(
            "firewall rules (PUT)",
            Method::PUT,
            format!("/edgeGateways/{gw}/firewall/rules"),
            "/edgeGateways/{id}/firewall/rules",
            rules.clone(),
        ),
        sample(
            "firewall rule (PUT)",
            Method::PUT,
            format!("/edgeGateways/{gw}/firewall/rules/{rule_id}"),
            "/edgeGateways/{id}/firewall/rules/{rule}",
            rule,
        ),
        sample(
            "firewall group",
            Method::POST,
            "/firewallGroups".into(),
            "/firewallGroups",
            ip_set(&alb.gateway, "t", &["10.0.0.2"]),
        ),
        sample(
            "firewall group (PUT)",
            Method::PUT,
            format!("/firewallGroups/{group_id}"),
            "/firewallGroups/{id}",
            client.ok(&format!("/firewallGroups/{group_id}")).await,
        ),
        sample(
            "certificate",
            Method::POST,
            "/ssl/certificateLibrary".into(),
            "/ssl/certificateLibrary",
            json!({"alias": "c2", "certificate": "PEM", "privateKey": "k"}),
        ),
        sample(
            "certificate (PUT)",
            Method::PUT,
            format!("/ssl/certificateLibrary/{cert_id}"),
            "/ssl/certificateLibrary/{id}",
            client
                .ok(&format!("/ssl/certificateLibrary/{cert_id}"))
                .await,
        ),
        sample(
            "port profile",
            Method::POST,
            "/applicationPortProfiles".into(),
            "/applicationPortProfiles",
            profile.clone(),
        ),
        sample(
            "port profile (PUT)",
            Method::PUT,
            format!("/applicationPortProfiles/{profile_id}"),
            "/applicationPortProfiles/{id}",
            client
                .ok(&format!("/applicationPortProfiles/{profile_id}"))
                .await,
        ),
        sample(
            "RDE",
            Method::POST,
            format!("/entityTypes/{rde_type}"),
            "/entityTypes/{type_id}",
            json!({"name": "c", "entity": {"spec": {}}}),
        ),
        sample(
            "RDE (PUT)",
            Method::PUT,
            format!("/entities/{entity_id}"),
            "/entities/{id}",
            client.ok(&format!("/entities/{entity_id}")).await,
        ),
    ];
    for sample in &mut tenant {
        refuse_all(&sim, &client, sample, &mut table).await;
    }
    let lb = admin.ok(&format!("/edgeGateways/{gw}/loadBalancer")).await;
    let config = sample(
        "load balancer config (PUT)",
        Method::PUT,
        format!("/edgeGateways/{gw}/loadBalancer"),
        "/edgeGateways/{id}/loadBalancer",
        lb,
    );
    refuse_all(&sim, &admin, &config, &mut table).await;

    let spaces = start(Scenario::ip_space()).await;
    let client = Client::tenant(&spaces).await;
    let gw = client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let space = client
        .ok(&format!(
            "/ipSpaces/floatingIpSuggestions?filter=gatewayId=={gw}"
        ))
        .await["values"][0]["ipSpaceRef"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let request = json!({"type": "FLOATING_IP", "quantity": 1});
    client
        .write_ok(
            Method::POST,
            &format!("/ipSpaces/{space}/allocate"),
            Some(&request),
        )
        .await;
    let mut allocation =
        client.ok(&format!("/ipSpaces/{space}/allocations")).await["values"][0].clone();
    let allocation_id = allocation["id"].as_str().unwrap().to_string();
    allocation["usageCategories"] = json!(["NAT"]);
    for sample in [
        sample(
            "IP Space allocation",
            Method::POST,
            format!("/ipSpaces/{space}/allocate"),
            "/ipSpaces/{id}/allocate",
            request,
        ),
        sample(
            "IP Space allocation (PUT)",
            Method::PUT,
            format!("/ipSpaces/{space}/allocations/{allocation_id}"),
            "/ipSpaces/{id}/allocations/{allocation}",
            allocation,
        ),
    ] {
        refuse_all(&spaces, &client, &sample, &mut table).await;
    }
    print(&table);
}

#[tokio::test]
async fn a_pool_of_more_members_than_the_spec_allows_is_refused_and_timed() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    for count in [100usize, 101, 5000] {
        let ips: Vec<String> = (0..count)
            .map(|i| format!("10.1.{}.{}", i / 250, i % 250 + 1))
            .collect();
        let ips: Vec<&str> = ips.iter().map(String::as_str).collect();
        let body = alb.pool(&format!("p{count}"), &ips);
        let started = std::time::Instant::now();
        let reply = client
            .post(&format!("{CLOUDAPI}/loadBalancer/pools"), &body)
            .await;
        let took = started.elapsed();
        eprintln!(
            "POST of a pool with {count} members: {} in {took:?}",
            reply.status
        );
        if count <= 100 {
            assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.body);
            continue;
        }
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
        let message = reply.body["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("$.members: {count} items, maxItems 100")),
            "{message}"
        );
    }
}

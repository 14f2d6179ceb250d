//! Firewall groups (IP sets): entries, names, owners, the summaries list
//! and the references that keep a group from being deleted.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::firewall::{allow, ip_set};
use crate::support::{Alb, CLOUDAPI, Client, Reply, start};

fn refused(reply: &Reply, needle: &str) {
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    let message = reply.body["message"].as_str().unwrap_or_default();
    assert!(message.contains(needle), "{needle}: {message}");
}

#[tokio::test]
async fn ip_set_entries_names_types_and_owners_are_checked() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let groups = format!("{CLOUDAPI}/firewallGroups");
    let good = [
        "10.0.0.1",
        "10.0.0.1-10.0.0.9",
        "10.0.0.0/8",
        "2001:db8::1",
        "2001:db8::1-2001:db8::ff",
        "2001:db8::/64",
    ];
    let id = client
        .write_ok(
            Method::POST,
            "/firewallGroups",
            Some(
                &json!({"name": "web", "ownerRef": {"id": alb.gateway_id()}, "ipAddresses": good}),
            ),
        )
        .await;
    assert!(id.starts_with("urn:vcloud:firewallGroup:"));
    let read = client.ok(&format!("/firewallGroups/{id}")).await;
    assert_eq!(read["typeValue"], "IP_SET", "the spec's default");
    assert_eq!(read["ownerRef"], alb.gateway, "the owner is named");
    assert_eq!(read["orgRef"]["name"], "org1");
    assert_eq!(read["status"], "REALIZED");
    assert_eq!(read["ipAddresses"], json!(good));

    for bad in [
        "10.0.0.0/33",
        "10.0.0.9-10.0.0.1",
        "10.0.0.1-2001:db8::1",
        "10.0.0.256",
        "web-server",
        "10.0.0.1/",
    ] {
        let reply = client
            .post(&groups, &ip_set(&alb.gateway, "bad", &[bad]))
            .await;
        refused(&reply, &format!("'{bad}'"));
    }
    let mut updated = read.clone();
    updated["ipAddresses"] = json!(["10.0.0.1", "10.0.0.300"]);
    refused(
        &client.put(&format!("{groups}/{id}"), &updated).await,
        "'10.0.0.300'",
    );
    let mut moved = read.clone();
    moved["ownerRef"] = json!({"id": "urn:vcloud:gateway:00000000-0000-0000-0000-000000000000"});
    refused(
        &client.put(&format!("{groups}/{id}"), &moved).await,
        "cannot move",
    );
    for (field, value, needle) in [
        (
            "typeValue",
            json!("STATIC_MEMBERS"),
            "STATIC_MEMBERS is not supported",
        ),
        (
            "type",
            json!("SECURITY_GROUP"),
            "SECURITY_GROUP is not supported",
        ),
        (
            "members",
            json!([{"id": "urn:vcloud:network:x"}]),
            "not members",
        ),
    ] {
        let mut body = json!({"name": "other", "ownerRef": alb.gateway});
        body[field] = value;
        refused(&client.post(&groups, &body).await, needle);
    }
    let duplicate = client
        .post(&groups, &ip_set(&alb.gateway, "web", &["10.0.0.2"]))
        .await;
    assert_eq!(duplicate.status, StatusCode::BAD_REQUEST);
    assert_eq!(duplicate.minor(), "DUPLICATE_NAME");
}

#[tokio::test]
async fn summaries_filter_by_name_owner_type_and_context() {
    let sim = start(Scenario::two_orgs()).await;
    let admin = Client::system(&sim).await;
    let edge1 = Alb::discover(&admin, "edge1").await;
    let edge2 = Alb::discover(&admin, "edge2").await;
    for (alb, name) in [(&edge1, "a"), (&edge1, "b"), (&edge2, "a")] {
        admin
            .write_ok(
                Method::POST,
                "/firewallGroups",
                Some(&ip_set(&alb.gateway, name, &["192.0.2.1"])),
            )
            .await;
    }
    let total = |page: &Value| page["resultTotal"].as_u64().unwrap();
    let list = |filter: String| {
        let admin = admin.clone();
        async move {
            admin
                .ok(&format!("/firewallGroups/summaries?filter={filter}"))
                .await
        }
    };
    assert_eq!(total(&list("name==a".into()).await), 2, "one per gateway");
    let (one, two) = (edge1.gateway_id(), edge2.gateway_id());
    assert_eq!(total(&list(format!("ownerRef.id=={one}")).await), 2);
    assert_eq!(total(&list(format!("_context=={two}")).await), 1);
    assert_eq!(
        total(&list(format!("typeValue==IP_SET;ownerRef.id=={two}")).await),
        1
    );
    assert_eq!(total(&list("typeValue==VM_CRITERIA".into()).await), 0);
    let page = admin
        .ok("/firewallGroups/summaries?pageSize=2&page=2")
        .await;
    assert_eq!((total(&page), page["pageCount"].as_u64()), (3, Some(2)));
    assert_eq!(page["values"][0].get("ipAddresses"), None, "a summary");

    // A tenant sees its org's groups only, and cannot use another's.
    let tenant = Client::tenant(&sim).await;
    let mine = tenant.ok("/firewallGroups/summaries").await;
    assert_eq!(total(&mine), 2);
    let theirs = list(format!("ownerRef.id=={two}")).await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let reply = tenant
        .get(&format!("{CLOUDAPI}/firewallGroups/{theirs}"))
        .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.body);
    let rules = format!("{CLOUDAPI}/edgeGateways/{one}/firewall/rules");
    refused(
        &admin
            .put(&rules, &json!({"userDefinedRules": [allow("x", &theirs)]}))
            .await,
        "does not exist on this edge gateway",
    );
}

#[tokio::test]
async fn a_group_in_use_by_a_rule_or_a_pool_cannot_be_deleted() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let set = client
        .write_ok(
            Method::POST,
            "/firewallGroups",
            Some(&ip_set(&alb.gateway, "nodes", &["10.0.0.11", "10.0.0.12"])),
        )
        .await;
    let group_path = format!("/firewallGroups/{set}");
    let rules = format!("/edgeGateways/{}/firewall/rules", alb.gateway_id());
    client
        .write_ok(
            Method::PUT,
            &rules,
            Some(&json!({"userDefinedRules": [allow("in", &set)]})),
        )
        .await;
    refused(
        &client.delete(&format!("{CLOUDAPI}{group_path}")).await,
        "in use by firewall rule in",
    );
    client
        .write_ok(Method::PUT, &rules, Some(&json!({"userDefinedRules": []})))
        .await;

    // A pool in group mode: its members are the set's entries.
    let mut pool = alb.pool("grouped", &[]);
    pool["memberGroupRef"] = json!({"id": set});
    let pool_id = client
        .write_ok(Method::POST, "/loadBalancer/pools", Some(&pool))
        .await;
    let summaries = client
        .ok(&format!(
            "/edgeGateways/{}/loadBalancer/poolSummaries",
            alb.gateway_id()
        ))
        .await;
    assert_eq!(summaries["values"][0]["memberGroupType"], "IP_SET");
    assert_eq!(summaries["values"][0]["memberCount"], 2);
    refused(
        &client.delete(&format!("{CLOUDAPI}{group_path}")).await,
        "in use by load balancer pool grouped",
    );
    let mut unknown = alb.pool("nowhere", &[]);
    unknown["memberGroupRef"] = json!({"id": "urn:vcloud:firewallGroup:nope"});
    refused(
        &client
            .post(&format!("{CLOUDAPI}/loadBalancer/pools"), &unknown)
            .await,
        "Firewall group urn:vcloud:firewallGroup:nope does not exist",
    );
    client
        .write_ok(
            Method::DELETE,
            &format!("/loadBalancer/pools/{pool_id}"),
            None,
        )
        .await;
    let task = client.write(Method::DELETE, &group_path, None).await;
    assert_eq!(task["operationName"], "deleteFirewallGroup");
    assert_eq!(task["status"], "success", "{task}");
    let gone = client.get(&format!("{CLOUDAPI}{group_path}")).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
}

#[tokio::test]
async fn pools_name_a_member_group_from_api_37_1() {
    let mut scenario = Scenario::default_scenario();
    scenario.api_versions.insert(0, "37.0".into());
    let sim = start(scenario).await;
    let client = Client::tenant(&sim).await;
    let mut old = client.clone();
    old.api_version = "37.0";
    let alb = Alb::discover(&client, "edge1").await;
    let set = client
        .write_ok(
            Method::POST,
            "/firewallGroups",
            Some(&ip_set(&alb.gateway, "nodes", &["10.0.0.11"])),
        )
        .await;
    let mut pool = alb.pool("grouped", &[]);
    pool["memberGroupRef"] = json!({"id": set});
    let url = format!("{CLOUDAPI}/loadBalancer/pools");
    refused(
        &old.post(&url, &pool).await,
        "Unrecognized field \"memberGroupRef\" (class EdgeLoadBalancerPool), not in API version 37.0",
    );
    client
        .write_ok(Method::POST, "/loadBalancer/pools", Some(&pool))
        .await;
}

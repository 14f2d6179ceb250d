//! Scripted sessions that call every modelled CloudAPI endpoint, on the
//! happy path and on a few failure paths, for the conformance test.

use reqwest::Method;
use serde_json::json;
use vcdsim::Sim;

use crate::firewall::{allow, ip_set};
use crate::support::{Alb, CLOUDAPI, Client};

/// Drives every modelled CloudAPI endpoint once, success and failure.
pub async fn exercise_ip_blocks(sim: &Sim) {
    let client = Client::tenant(sim).await;
    let admin = Client::system(sim).await;
    let role = client.ok("/sessions/current").await["roleRefs"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    client.ok(&format!("/roles/{role}/rights")).await;
    let org = client.ok("/orgs").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    client.ok(&format!("/orgs/{org}")).await;
    let vdc = client.ok("/vdcs").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    client.ok(&format!("/vdcs/{vdc}")).await;
    let net = client.ok("/orgVdcNetworks").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    client.ok(&format!("/orgVdcNetworks/{net}")).await;
    let alb = Alb::discover(&client, "edge1").await;
    let gw = alb.gateway_id().to_string();
    client.ok(&format!("/edgeGateways/{gw}")).await;
    let lb = client.ok(&format!("/edgeGateways/{gw}/loadBalancer")).await;
    admin
        .write_ok(
            Method::PUT,
            &format!("/edgeGateways/{gw}/loadBalancer"),
            Some(&lb),
        )
        .await;
    let assignment = client
        .ok("/loadBalancer/serviceEngineGroups/assignments")
        .await["values"][0]["id"]
        .clone();
    client
        .ok(&format!(
            "/loadBalancer/serviceEngineGroups/assignments/{}",
            assignment.as_str().unwrap()
        ))
        .await;

    let session = client.ok("/sessions/current").await;
    let profile = json!({
        "name": "appPort_dnat-x", "scope": "TENANT", "orgRef": session["org"], "contextEntityId": vdc,
        "applicationPorts": [{"protocol": "TCP", "destinationPorts": ["80"]}],
    });
    let profile_id = client
        .write_ok(Method::POST, "/applicationPortProfiles", Some(&profile))
        .await;
    let stored = client
        .ok(&format!("/applicationPortProfiles/{profile_id}"))
        .await;
    client
        .write_ok(
            Method::PUT,
            &format!("/applicationPortProfiles/{profile_id}"),
            Some(&stored),
        )
        .await;
    client.ok("/applicationPortProfiles").await;
    let rule = json!({
        "name": "dnat-x", "enabled": true, "ruleType": "DNAT", "externalAddresses": "203.0.113.21",
        "internalAddresses": "192.168.8.2", "dnatExternalPort": "80",
        "applicationPortProfile": {"name": "appPort_dnat-x", "id": profile_id},
    });
    let rule_id = client
        .write_ok(
            Method::POST,
            &format!("/edgeGateways/{gw}/nat/rules"),
            Some(&rule),
        )
        .await;
    let stored = client
        .ok(&format!("/edgeGateways/{gw}/nat/rules/{rule_id}"))
        .await;
    client
        .write_ok(
            Method::PUT,
            &format!("/edgeGateways/{gw}/nat/rules/{rule_id}"),
            Some(&stored),
        )
        .await;
    client.ok(&format!("/edgeGateways/{gw}/nat/rules")).await;

    let certs = client.ok("/ssl/certificateLibrary").await;
    let cert_id = certs["values"][0]["id"].as_str().unwrap().to_string();
    let cert = client
        .ok(&format!("/ssl/certificateLibrary/{cert_id}"))
        .await;
    client
        .put(
            &format!("{CLOUDAPI}/ssl/certificateLibrary/{cert_id}"),
            &cert,
        )
        .await;
    client
        .post(
            &format!("{CLOUDAPI}/ssl/certificateLibrary"),
            &json!({"alias": "c2", "certificate": "PEM", "privateKey": "k"}),
        )
        .await;

    let pool = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&alb.pool("p", &["10.0.0.11"])),
        )
        .await;
    let stored = client.ok(&format!("/loadBalancer/pools/{pool}")).await;
    client
        .write_ok(
            Method::PUT,
            &format!("/loadBalancer/pools/{pool}"),
            Some(&stored),
        )
        .await;
    let mut vs = alb.virtual_service("vs", &pool, "203.0.113.20", 443);
    vs["applicationProfile"] =
        json!({"name": "System-Secure-HTTP", "type": "HTTPS", "systemDefined": true});
    vs["servicePorts"][0]["sslEnabled"] = json!(true);
    vs["certificateRef"] = json!({"name": cert["alias"], "id": cert_id});
    let vs_id = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;
    let stored = client
        .ok(&format!("/loadBalancer/virtualServices/{vs_id}"))
        .await;
    client
        .write_ok(
            Method::PUT,
            &format!("/loadBalancer/virtualServices/{vs_id}"),
            Some(&stored),
        )
        .await;
    client
        .ok(&format!("/edgeGateways/{gw}/loadBalancer/poolSummaries"))
        .await;
    client
        .ok(&format!(
            "/edgeGateways/{gw}/loadBalancer/virtualServiceSummaries"
        ))
        .await;
    client
        .ok(&format!("/edgeGateways/{gw}/usedIpAddresses"))
        .await;
    client.ok("/edgeGateways").await;

    let entities = client
        .ok("/entities/types/vmware/capvcdCluster/1.3.0")
        .await;
    let entity_id = entities["values"][0]["id"].as_str().unwrap().to_string();
    let entity = client.ok(&format!("/entities/{entity_id}")).await;
    client
        .put(&format!("{CLOUDAPI}/entities/{entity_id}"), &entity)
        .await;
    client
        .write_ok(
            Method::POST,
            "/entityTypes/urn:vcloud:type:vmware:capvcdCluster:1.3.0",
            Some(&json!({"name": "c", "entity": {}})),
        )
        .await;

    // Failures: every error body is an `Error`.
    client
        .get(&format!("{CLOUDAPI}/edgeGateways/urn:vcloud:gateway:nope"))
        .await;
    client
        .delete(&format!("{CLOUDAPI}/loadBalancer/pools/{pool}"))
        .await;
    client
        .post(
            &format!("{CLOUDAPI}/loadBalancer/pools"),
            &alb.pool("p", &["10.0.0.11"]),
        )
        .await;
    Client::anonymous(sim)
        .get(&format!("{CLOUDAPI}/orgs"))
        .await;
    exercise_firewall(&client, &admin, &alb).await;
}

/// Every firewall endpoint once (and a transparent virtual service on a
/// pool in group mode), for the conformance test; `admin` is the provider.
async fn exercise_firewall(client: &Client, admin: &Client, alb: &Alb) {
    let gw = alb.gateway_id();
    let set = client
        .write_ok(
            Method::POST,
            "/firewallGroups",
            Some(&ip_set(&alb.gateway, "conformance", &["192.0.2.0/24"])),
        )
        .await;
    let mut group = client.ok(&format!("/firewallGroups/{set}")).await;
    group["ipAddresses"] = json!(["192.0.2.0/25", "2001:db8::1-2001:db8::9"]);
    client
        .write_ok(Method::PUT, &format!("/firewallGroups/{set}"), Some(&group))
        .await;
    client
        .ok(&format!(
            "/firewallGroups/summaries?filter=typeValue==IP_SET;ownerRef.id=={gw}"
        ))
        .await;
    client
        .ok(&format!("/firewallGroups/summaries?filter=_context=={gw}"))
        .await;

    // A transparent virtual service on a pool in group mode.
    let settings = format!("/edgeGateways/{gw}/loadBalancer");
    let mut on = admin.ok(&settings).await;
    on["transparentModeEnabled"] = json!(true);
    admin.write_ok(Method::PUT, &settings, Some(&on)).await;
    let mut pool = alb.pool("grouped", &[]);
    pool["memberGroupRef"] = json!({"id": set});
    let pool = client
        .write_ok(Method::POST, "/loadBalancer/pools", Some(&pool))
        .await;
    client.ok(&format!("/loadBalancer/pools/{pool}")).await;
    client
        .ok(&format!("/edgeGateways/{gw}/loadBalancer/poolSummaries"))
        .await;
    let mut vs = alb.virtual_service("transparent", &pool, "203.0.113.22", 80);
    vs["transparentModeEnabled"] = json!(true);
    let vs = client
        .write_ok(Method::POST, "/loadBalancer/virtualServices", Some(&vs))
        .await;
    client
        .ok(&format!("/loadBalancer/virtualServices/{vs}"))
        .await;
    client
        .ok(&format!(
            "/edgeGateways/{gw}/loadBalancer/virtualServiceSummaries"
        ))
        .await;
    for path in [
        format!("/loadBalancer/virtualServices/{vs}"),
        format!("/loadBalancer/pools/{pool}"),
    ] {
        client.write_ok(Method::DELETE, &path, None).await;
    }

    let path = format!("/edgeGateways/{gw}/firewall/rules");
    client
        .write_ok(
            Method::PUT,
            &path,
            Some(&json!({"userDefinedRules": [allow("conformance", &set)]})),
        )
        .await;
    let mut listed = client.ok(&path).await;
    listed["defaultRules"][0]["actionValue"] = json!("REJECT");
    client.write_ok(Method::PUT, &path, Some(&listed)).await;
    let rule = client.ok(&path).await["userDefinedRules"][0].clone();
    let id = rule["id"].as_str().unwrap().to_string();
    client.ok(&format!("{path}/{id}")).await;
    client
        .write_ok(Method::PUT, &format!("{path}/{id}"), Some(&rule))
        .await;
    client
        .write_ok(Method::DELETE, &format!("{path}/{id}"), None)
        .await;
    client
        .write_ok(Method::DELETE, &format!("/firewallGroups/{set}"), None)
        .await;
}

pub async fn exercise_ip_space(sim: &Sim) {
    let client = Client::tenant(sim).await;
    let gw = client.ok("/edgeGateways").await["values"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    client.ok("/ipSpaces/summaries").await;
    let suggestions = client
        .ok(&format!(
            "/ipSpaces/floatingIpSuggestions?filter=gatewayId=={gw}"
        ))
        .await;
    let space = suggestions["values"][0]["ipSpaceRef"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    client.ok(&format!("/ipSpaces/{space}")).await;
    let body = json!({"type": "FLOATING_IP", "quantity": 1});
    client
        .write_ok(
            Method::POST,
            &format!("/ipSpaces/{space}/allocate"),
            Some(&body),
        )
        .await;
    let allocations = client.ok(&format!("/ipSpaces/{space}/allocations")).await;
    let mut allocation = allocations["values"][0].clone();
    let id = allocation["id"].as_str().unwrap().to_string();
    client
        .ok(&format!("/ipSpaces/{space}/allocations/{id}"))
        .await;
    allocation["usageState"] = json!("USED_MANUAL");
    allocation["description"] = json!("claimed");
    client
        .write_ok(
            Method::PUT,
            &format!("/ipSpaces/{space}/allocations/{id}"),
            Some(&allocation),
        )
        .await;
    client
        .ok(&format!(
            "/ipSpaces/floatingIpSuggestions?filter=gatewayId=={gw}"
        ))
        .await;
    client.ok(&format!("/edgeGateways/{gw}")).await;
}

//! Data-center groups: a group's network and edge gateway belong to the
//! group (no `orgVdc`), `_context` finds them from any member VDC, VMs of
//! one cluster sit in several members, and TENANT port profiles are usable
//! on a gateway only when created in its owner's context.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::{Scenario, ScenarioError, Sim, SimError};

use crate::support::{Client, find_named, start};

fn id_of(page: &Value, name: &str) -> String {
    find_named(page, name)["id"].as_str().unwrap().to_string()
}

/// Reads everything a client of a DC-group cluster reads; the conformance
/// test validates the answers against the spec.
pub async fn exercise(sim: &Sim) {
    let client = Client::tenant(sim).await;
    let groups = client.ok("/vdcGroups").await;
    let group = id_of(&groups, "group1");
    client.ok(&format!("/vdcGroups/{group}")).await;
    let vdc1 = id_of(&client.ok("/vdcs").await, "vdc1");
    client
        .ok(&format!(
            "/orgVdcNetworks?filter=_context=={vdc1};name==net1"
        ))
        .await;
    client.ok("/edgeGateways").await;
}

#[tokio::test]
async fn a_group_owns_its_network_and_gateway_and_lists_its_members() {
    let sim = start(Scenario::dc_group()).await;
    let client = Client::tenant(&sim).await;
    let vdcs = client.ok("/vdcs").await;
    let (vdc1, vdc2) = (id_of(&vdcs, "vdc1"), id_of(&vdcs, "vdc2"));
    let groups = client.ok("/vdcGroups?filter=name==group1").await;
    let group = find_named(&groups, "group1");
    let group_id = group["id"].as_str().unwrap();
    assert!(group_id.starts_with("urn:vcloud:vdcGroup:"), "{group}");
    let members: Vec<&str> = group["participatingOrgVdcs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["vdcRef"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(members, [vdc1.as_str(), vdc2.as_str()]);
    assert_eq!(group["type"], "LOCAL");
    assert_eq!(group["networkProviderType"], "NSX_T");
    assert_eq!(
        client.ok(&format!("/vdcGroups/{group_id}")).await["name"],
        "group1"
    );

    let network = find_named(&client.ok("/orgVdcNetworks").await, "net1").clone();
    assert_eq!(network["orgVdc"], Value::Null);
    assert_eq!(network["ownerRef"]["id"], group_id);
    let gateway = find_named(&client.ok("/edgeGateways").await, "edge1").clone();
    assert_eq!(gateway["orgVdc"], Value::Null);
    assert_eq!(gateway["ownerRef"]["id"], group_id);
    assert_eq!(network["connection"]["routerRef"]["id"], gateway["id"]);
}

#[tokio::test]
async fn context_finds_a_group_network_from_each_member_and_a_vdc_filter_does_not() {
    // vdc3 is outside the group, with a network of its own.
    let mut scenario = Scenario::dc_group();
    let extra: vcdsim::scenario::VdcSpec =
        serde_yaml_ng::from_str("{name: vdc3, networks: [{name: net3, cidr: 10.3.0.1/24}]}")
            .unwrap();
    scenario.orgs[0].vdcs.push(extra);
    let sim = start(scenario).await;
    let client = Client::tenant(&sim).await;
    let vdcs = client.ok("/vdcs").await;
    let names = |page: Value| -> Vec<String> {
        page["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["name"].as_str().unwrap().to_string())
            .collect()
    };
    for (vdc, expected) in [
        ("vdc1", vec!["net1"]),
        ("vdc2", vec!["net1"]),
        ("vdc3", vec!["net3"]),
    ] {
        let id = id_of(&vdcs, vdc);
        let found = client
            .ok(&format!("/orgVdcNetworks?filter=_context=={id}"))
            .await;
        assert_eq!(names(found), expected, "in the context of {vdc}");
        let by_vdc = client
            .ok(&format!("/orgVdcNetworks?filter=orgVdc.id=={id}"))
            .await;
        let owned: Vec<&str> = if vdc == "vdc3" { vec!["net3"] } else { vec![] };
        assert_eq!(
            names(by_vdc),
            owned,
            "orgVdc.id=={vdc} matches only the VDC's own"
        );
    }
    let group = id_of(&client.ok("/vdcGroups").await, "group1");
    let found = client
        .ok(&format!("/orgVdcNetworks?filter=_context=={group}"))
        .await;
    assert_eq!(names(found), ["net1"]);
}

#[tokio::test]
async fn one_cluster_has_vms_in_two_member_vdcs_and_a_vm_can_move() {
    let sim = start(Scenario::dc_group()).await;
    let client = Client::tenant(&sim).await;
    let vdc_of = |body: &Value, vm: &str| -> String {
        body["record"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == vm)
            .map(|r| r["vdcName"].as_str().unwrap().to_string())
            .unwrap()
    };
    let query = "/api/query?type=vm&filter=isVAppTemplate==false;containerName==cluster1";
    let before = client.get(query).await.body;
    assert_eq!(before["total"], 3, "{before}");
    assert_eq!(vdc_of(&before, "worker-0"), "vdc1");
    assert_eq!(vdc_of(&before, "worker-1"), "vdc2");

    let (vm, target) = sim.with_world(|w| {
        let vdc1 = w.vdcs.iter().find(|v| v.name == "vdc1").unwrap().id.clone();
        let target = w
            .vapps
            .iter()
            .find(|a| a.vdc_id == vdc1)
            .unwrap()
            .id
            .clone();
        let vm = w
            .vms
            .iter()
            .find(|v| v.name == "worker-1")
            .unwrap()
            .id
            .clone();
        (vm, target)
    });
    sim.with_world(|w| w.move_vm(&vm, &target)).unwrap();
    let after = client.get(query).await.body;
    assert_eq!(vdc_of(&after, "worker-1"), "vdc1");
    let moved = sim.with_world(|w| {
        w.vms
            .iter()
            .find(|v| v.id == vm)
            .map(|v| v.nics[0].ip.clone())
    });
    assert_eq!(
        moved.as_deref(),
        Some("10.0.0.12"),
        "the VM keeps its id and address"
    );
    assert!(
        sim.with_world(|w| w.move_vm(&vm, "urn:vcloud:vapp:missing"))
            .is_err()
    );
}

#[tokio::test]
async fn a_gateway_takes_tenant_profiles_of_its_owners_context_only() {
    let sim = start(Scenario::dc_group()).await;
    let client = Client::tenant(&sim).await;
    let org = client.ok("/orgs").await["values"][0].clone();
    let vdc1 = id_of(&client.ok("/vdcs").await, "vdc1");
    let group = id_of(&client.ok("/vdcGroups").await, "group1");
    let gateway = id_of(&client.ok("/edgeGateways").await, "edge1");
    let profile = |name: &str, context: &str| {
        json!({
            "name": name, "scope": "TENANT",
            "orgRef": {"name": org["name"], "id": org["id"]},
            "contextEntityId": context,
            "applicationPorts": [{"protocol": "TCP", "destinationPorts": ["8443"]}],
        })
    };
    let in_group = client
        .write_ok(
            Method::POST,
            "/applicationPortProfiles",
            Some(&profile("in-group", &group)),
        )
        .await;
    let in_member = client
        .write_ok(
            Method::POST,
            "/applicationPortProfiles",
            Some(&profile("in-vdc1", &vdc1)),
        )
        .await;
    let refused = client
        .post(
            "/cloudapi/1.0.0/applicationPortProfiles",
            &profile(
                "nowhere",
                "urn:vcloud:vdc:00000000-0000-0000-0000-000000000000",
            ),
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("contextEntityId")
    );

    let rule = |name: &str, profile: &str| {
        json!({
            "name": name, "enabled": true, "ruleType": "DNAT",
            "externalAddresses": "203.0.113.20", "internalAddresses": "10.0.0.50",
            "applicationPortProfile": {"id": profile},
        })
    };
    let rules = format!("/cloudapi/1.0.0/edgeGateways/{gateway}/nat/rules");
    let taken = client.post(&rules, &rule("group-context", &in_group)).await;
    assert_eq!(taken.status, StatusCode::ACCEPTED, "{}", taken.body);
    let other = client
        .post(&rules, &rule("member-context", &in_member))
        .await;
    assert_eq!(other.status, StatusCode::BAD_REQUEST, "{}", other.body);
}

#[tokio::test]
async fn bad_groups_are_refused_with_a_reason() {
    let base = "orgs: [{name: o, vdcs: [{name: v}], ";
    let empty = format!("{base}vdcGroups: [{{name: g, vdcs: []}}]}}]");
    assert!(matches!(
        Sim::from_yaml(&empty).await,
        Err(SimError::Scenario(ScenarioError::GroupSize {
            count: 0,
            ..
        }))
    ));
    let seventeen = vec!["v"; 17].join(", ");
    let big = format!("{base}vdcGroups: [{{name: g, vdcs: [{seventeen}]}}]}}]");
    assert!(matches!(
        Sim::from_yaml(&big).await,
        Err(SimError::Scenario(ScenarioError::GroupSize {
            count: 17,
            ..
        }))
    ));
    let stranger = format!("{base}vdcGroups: [{{name: g, vdcs: [w]}}]}}]");
    assert!(matches!(
        Sim::from_yaml(&stranger).await,
        Err(SimError::Scenario(ScenarioError::Dangling { .. }))
    ));
    let two_owners = format!(
        "{base}vdcGroups: [{{name: g, vdcs: [v]}}], edgeGateways: [{{name: e, vdc: v, vdcGroup: g}}]}}]"
    );
    assert!(matches!(
        Sim::from_yaml(&two_owners).await,
        Err(SimError::Scenario(ScenarioError::GatewayOwner(_)))
    ));
}

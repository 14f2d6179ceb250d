use reqwest::StatusCode;
use vcdsim::{Scenario, ScenarioError, Sim, SimError};

use crate::support::{Client, start};

#[tokio::test]
async fn shipped_scenarios_seed_and_dump() {
    for scenario in [
        Scenario::default_scenario(),
        Scenario::two_orgs(),
        Scenario::ip_space(),
        Scenario::dual_stack(),
        Scenario::dc_group(),
    ] {
        let sim = start(scenario).await;
        let state: serde_json::Value = crate::support::http()
            .get(format!("{}/_sim/state", sim.base_url()))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(
            state["orgs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o["name"] == "System")
        );
        assert!(!state["gateways"].as_array().unwrap().is_empty());
        assert_eq!(sim.dump()["site"]["name"], "vcdsim");
        sim.shutdown().await;
    }
}

#[tokio::test]
async fn a_yaml_string_starts_a_world() {
    let yaml = r#"
apiVersions: ["37.2"]
orgs:
  - name: acme
    users: [{name: ops, password: pw}]
    vdcs: [{name: v}]
"#;
    let sim = Sim::from_yaml(yaml).await.unwrap();
    let client = Client::login(&sim, "ops", "acme", "pw").await;
    assert_eq!(client.ok("/vdcs").await["values"][0]["name"], "v");
    let versions = client.get("/api/versions").await.body;
    assert_eq!(versions["versionInfo"].as_array().unwrap().len(), 1);
    assert_eq!(
        client.get("/cloudapi/1.0.0/edgeGateways").await.status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn bad_scenarios_are_refused_with_a_reason() {
    let dangling = "orgs: [{name: o, edgeGateways: [{name: g, vdc: missing}]}]";
    match Sim::from_yaml(dangling).await {
        Err(SimError::Scenario(ScenarioError::Dangling { kind, name, .. })) => {
            assert_eq!((kind, name.as_str()), ("vdc", "missing"));
        }
        other => panic!("expected a dangling vdc, got {:?}", other.err()),
    }
    let unknown_key = "orgs: [{name: o, colour: blue}]";
    assert!(matches!(
        Scenario::from_yaml(unknown_key),
        Err(ScenarioError::Yaml(_))
    ));
    let bad_range = "ipSpaces: [{name: s, ranges: ['10.0.0.9-10.0.0.1']}]";
    assert!(matches!(
        Sim::from_yaml(bad_range).await,
        Err(SimError::Scenario(ScenarioError::Ip(_)))
    ));
    let twice = "orgs: [{name: o}, {name: O}]";
    assert!(matches!(
        Sim::from_yaml(twice).await,
        Err(SimError::Scenario(ScenarioError::Duplicate { .. }))
    ));
}

//! Roles and their rights (`sessions/current` → `roleRefs` →
//! `roles/{id}/rights`), and the clock-skew knob's `Date` header.

use reqwest::StatusCode;
use serde_json::Value;
use vcdsim::Scenario;

use crate::support::{Client, start};

fn names(page: &Value) -> Vec<String> {
    page["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap().to_string())
        .collect()
}

async fn own_role(client: &Client) -> (String, String) {
    let session = client.ok("/sessions/current").await;
    let role = &session["roleRefs"][0];
    (
        role["name"].as_str().unwrap().to_string(),
        role["id"].as_str().unwrap().to_string(),
    )
}

#[tokio::test]
async fn a_predefined_role_lists_its_rights_and_another_org_cannot_read_it() {
    let yaml = r#"
orgs:
  - name: org1
    roles:
      - name: Load Balancer Reader
        rights: ["Organization vDC Gateway: View", "Organization vDC Gateway: View Load Balancer"]
    users:
      - {name: reader, password: pw, roles: ["Load Balancer Reader"]}
      - {name: admin1, password: pw, roles: ["Organization Administrator"]}
      - {name: nobody, password: pw, roles: ["Custom"]}
  - name: org2
    users:
      - {name: bob, password: pw, roles: ["Organization Administrator"]}
"#;
    let sim = vcdsim::Sim::from_yaml(yaml)
        .await
        .expect("the scenario seeds");
    let admin = Client::login(&sim, "admin1", "org1", "pw").await;
    let (name, role) = own_role(&admin).await;
    assert_eq!(name, "Organization Administrator");
    assert!(role.starts_with("urn:vcloud:role:"), "{role}");
    let rights = names(
        &admin
            .ok(&format!("/roles/{role}/rights?pageSize=128"))
            .await,
    );
    assert!(rights.contains(&"Organization vDC Gateway: Configure Load Balancer".to_string()));
    assert!(rights.contains(&"IP Spaces: Allocate".to_string()));

    let reader = Client::login(&sim, "reader", "org1", "pw").await;
    let (_, role) = own_role(&reader).await;
    let page = reader.ok(&format!("/roles/{role}/rights")).await;
    assert_eq!(
        names(&page),
        [
            "Organization vDC Gateway: View",
            "Organization vDC Gateway: View Load Balancer"
        ]
    );
    assert_eq!(page["resultTotal"], 2);
    assert!(
        page["values"][0]["id"]
            .as_str()
            .unwrap()
            .starts_with("urn:vcloud:right:")
    );

    let nobody = Client::login(&sim, "nobody", "org1", "pw").await;
    let (_, role) = own_role(&nobody).await;
    assert!(names(&nobody.ok(&format!("/roles/{role}/rights")).await).is_empty());

    let bob = Client::login(&sim, "bob", "org2", "pw").await;
    let other = bob
        .get(&format!("/cloudapi/1.0.0/roles/{role}/rights"))
        .await;
    assert_eq!(other.status, StatusCode::FORBIDDEN);
    assert_eq!(other.minor(), "ACCESS_TO_RESOURCE_IS_FORBIDDEN");
}

#[tokio::test]
async fn a_role_listed_twice_is_refused() {
    let yaml = "orgs:\n  - name: org1\n    roles: [{name: r}, {name: r}]\n";
    let error = vcdsim::Sim::from_yaml(yaml).await.err().expect("refused");
    assert!(error.to_string().contains("duplicate role 'r'"), "{error}");
}

#[tokio::test]
async fn the_date_header_shows_the_skewed_clock() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::anonymous(&sim);
    let date = |reply: &crate::support::Reply| {
        let text = reply.header("date").expect("a Date header").to_string();
        jiff::fmt::rfc2822::parse(&text)
            .expect("an HTTP date")
            .timestamp()
    };
    let now = jiff::Timestamp::now();
    let honest = date(&client.get("/api/versions").await);
    assert!(honest.duration_since(now).as_secs().abs() <= 2);
    sim.set_knobs(|k| k.clock_skew_ms = -3_600_000);
    let behind = date(&client.get("/api/versions").await);
    let skew = behind.duration_since(jiff::Timestamp::now()).as_secs();
    assert!((-3_602..=-3_598).contains(&skew), "{skew}");
}

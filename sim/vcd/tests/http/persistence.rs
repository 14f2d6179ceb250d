//! Pool persistence profiles as the spec states them: a known type, a
//! cookie or header name where the type needs one, PREMIUM for the types
//! that need it; a refusal changes nothing.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use vcdsim::Scenario;

use crate::support::{Alb, CLOUDAPI, Client, Reply, start};

#[tokio::test]
async fn persistence_profiles_are_checked_as_the_spec_states() {
    let sim = start(Scenario::default_scenario()).await;
    let client = Client::tenant(&sim).await;
    let alb = Alb::discover(&client, "edge1").await;
    let pools = format!("{CLOUDAPI}/loadBalancer/pools");
    let with = |name: &str, profile: Value| {
        let mut pool = alb.pool(name, &["10.0.0.11"]);
        pool["persistenceProfile"] = profile;
        pool
    };
    let refused = |reply: &Reply| {
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{:?}", reply.body);
        reply.body["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    let message = refused(
        &client
            .post(&pools, &with("a", json!({"type": "STICKY"})))
            .await,
    );
    assert!(message.contains("STICKY"), "{message}");
    let message = refused(
        &client
            .post(&pools, &with("b", json!({"type": "HTTP_COOKIE"})))
            .await,
    );
    assert!(message.contains("requires a value"), "{message}");

    let stored = client
        .write_ok(
            Method::POST,
            "/loadBalancer/pools",
            Some(&with("c", json!({"type": "HTTP_COOKIE", "value": "shop"}))),
        )
        .await;
    let pool = client.ok(&format!("/loadBalancer/pools/{stored}")).await;
    let profile = &pool["persistenceProfile"];
    assert_eq!(
        (&profile["type"], &profile["value"]),
        (&json!("HTTP_COOKIE"), &json!("shop"))
    );

    // APP_COOKIE, CUSTOM_HTTP_HEADER and TLS need a PREMIUM load balancer.
    let before = sim.dump();
    sim.with_world(|w| w.gateways[0].load_balancer.supported_feature_set = "STANDARD".into());
    for (name, profile) in [
        ("d", json!({"type": "TLS"})),
        ("e", json!({"type": "APP_COOKIE", "value": "JSESSIONID"})),
    ] {
        let message = refused(&client.post(&pools, &with(name, profile)).await);
        assert!(message.contains("PREMIUM"), "{message}");
    }
    sim.with_world(|w| w.gateways[0].load_balancer.supported_feature_set = "PREMIUM".into());
    assert_eq!(sim.dump(), before);
}

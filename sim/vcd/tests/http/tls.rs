//! The optional HTTPS listener: a client that trusts the simulator's CA
//! gets through; one that does not is refused during the handshake.

use std::time::Duration;

use vcdsim::{Options, Scenario, Sim};

async fn tls_sim() -> Sim {
    let options = Options {
        tls: true,
        ..Default::default()
    };
    Sim::start_with(Scenario::default_scenario(), options)
        .await
        .expect("the simulator starts with TLS")
}

fn client(ca_pem: Option<&str>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder().timeout(Duration::from_secs(10));
    if let Some(pem) = ca_pem {
        builder =
            builder.add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap());
    }
    builder.build().unwrap()
}

#[tokio::test]
async fn a_client_trusting_the_ca_is_served_over_https() {
    let sim = tls_sim().await;
    assert!(sim.base_url().starts_with("https://127.0.0.1:"));
    let ca = sim.ca_pem().expect("a CA when serving TLS");
    let reply = client(Some(ca))
        .get(format!("{}/api/versions", sim.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    assert_eq!(sim.count("GET /api/versions"), 1);
}

#[tokio::test]
async fn a_client_without_the_ca_is_refused_and_the_server_keeps_serving() {
    let sim = tls_sim().await;
    let refused = client(None)
        .get(format!("{}/api/versions", sim.base_url()))
        .send()
        .await;
    assert!(refused.is_err(), "an untrusted certificate must be refused");
    let reply = client(sim.ca_pem())
        .get(format!("{}/api/versions", sim.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
}

#[tokio::test]
async fn plain_http_stays_the_default() {
    let sim = Sim::start(Scenario::default_scenario()).await.unwrap();
    assert!(sim.base_url().starts_with("http://"));
    assert!(sim.ca_pem().is_none());
}

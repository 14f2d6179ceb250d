//! Version negotiation, paging, filters, tasks, typed errors, retries and
//! the rate limit against vcdsim, through the client's public API.

use std::time::{Duration, Instant};

use crate::support::vcd::*;
use serde_json::json;
use vcd_ccm::vcd::reference::EntityRef;
use vcd_ccm::vcd::resources::pool::Pool;
use vcd_ccm::vcd::resources::vm::VmScope;
use vcd_ccm::vcd::{ApiVersion, ClientMetrics, VcdClient, VcdError};
use vcdsim::scenario::CertificateSpec;
use vcdsim::{FaultAction, FaultRule, Scenario};

fn pool(name: &str, gateway: &EntityRef) -> Pool {
    serde_json::from_value(json!({
        "name": name,
        "enabled": true,
        "defaultPort": 30080,
        "algorithm": "ROUND_ROBIN",
        "members": [{"ipAddress": "10.0.0.11", "port": 30080, "ratio": 1, "enabled": true}],
        "healthMonitors": [{"type": "TCP"}],
        "gatewayRef": gateway,
    }))
    .expect("a pool body")
}

async fn gateway_of(client: &VcdClient) -> EntityRef {
    let placement = placement(client).await;
    EntityRef::new(placement.gateway.name, placement.gateway.id)
}

#[tokio::test]
async fn the_highest_common_version_is_used_on_every_request() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    assert_eq!(client.api_version(), ApiVersion::new(39, 1));
    client.tenancy().current_org().await.unwrap();
    let versioned = sim
        .requests()
        .iter()
        .filter(|e| e.template.starts_with("/cloudapi") && e.status == 200)
        .count();
    assert!(
        versioned > 0,
        "CloudAPI calls succeeded with the negotiated version"
    );
}

#[tokio::test]
async fn no_common_version_names_what_vcd_offers() {
    let mut scenario = Scenario::default_scenario();
    scenario.api_versions = vec!["33.0".into(), "34.0".into(), "35.2".into()];
    let sim = sim_from(scenario).await;
    let error = VcdClient::connect(config(&sim, tenant_token(&sim)), ClientMetrics::default())
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, VcdError::NoCommonVersion { .. }));
    assert!(
        text.contains("[33.0, 34.0, 35.2]") && text.contains("36.0–39.1"),
        "{text}"
    );
    assert_eq!(login_calls(&sim), 0, "no login before a version is agreed");
}

#[tokio::test]
async fn page_lists_follow_page_count_across_three_pages() {
    let mut scenario = Scenario::default_scenario();
    for i in 0..300 {
        scenario.orgs[0].certificates.push(CertificateSpec {
            alias: format!("cert-{i:03}"),
            certificate: "-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n".into(),
            description: String::new(),
        });
    }
    let sim = sim_from(scenario).await;
    let client = tenant_client(&sim).await;
    let certificates = client.certificates().list().await.unwrap();
    assert_eq!(certificates.len(), 301);
    assert_eq!(sim.count("GET /cloudapi/1.0.0/ssl/certificateLibrary"), 3);
}

#[tokio::test]
async fn cursor_lists_follow_the_next_page_link() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let gateway = gateway_of(&client).await;
    sim.with_world(|world| {
        for i in 0..260 {
            let body: vcdsim::world::nat::NatRuleBody = serde_json::from_value(json!({
                "id": format!("00000000-0000-0000-0000-{i:012}"),
                "name": format!("rule-{i}"),
                "type": "DNAT",
                "externalAddresses": "203.0.113.20",
                "internalAddresses": "10.0.0.11",
                "version": {"version": 0},
            }))
            .unwrap();
            world.nat_rules.push(vcdsim::world::nat::NatRule {
                gateway_id: gateway.id.clone(),
                body,
            });
        }
    });
    let rules = client.nat_rules().list(&gateway.id).await.unwrap();
    assert_eq!(rules.len(), 260);
    assert_eq!(
        sim.count("GET /cloudapi/1.0.0/edgeGateways/{id}/nat/rules"),
        3
    );
}

#[tokio::test]
async fn the_vm_query_pages_through_the_whole_vapp() {
    let sim = sim().await;
    sim.with_world(|world| {
        let vapp = world.vapps[0].id.clone();
        for i in 0..300 {
            let spec: vcdsim::scenario::VmSpec =
                serde_json::from_value(json!({"name": format!("extra-{i}")})).unwrap();
            world.add_vm(&vapp, &spec).unwrap();
        }
    });
    let client = tenant_client(&sim).await;
    let vms = client
        .vms()
        .query(&VmScope::VApp("cluster1".into()))
        .await
        .unwrap();
    assert_eq!(vms.len(), 303);
    assert_eq!(sim.count("GET /api/query"), 3);
}

#[tokio::test]
async fn filter_values_with_fiql_characters_are_escaped() {
    let mut scenario = Scenario::default_scenario();
    let tricky = r"web,api;v2 (prod)\x";
    for alias in [tricky, "web"] {
        scenario.orgs[0].certificates.push(CertificateSpec {
            alias: alias.into(),
            certificate: "PEM".into(),
            description: String::new(),
        });
    }
    let sim = sim_from(scenario).await;
    let client = tenant_client(&sim).await;
    let found = client
        .certificates()
        .find(tricky)
        .await
        .unwrap()
        .expect("found");
    assert_eq!(found.alias, tricky);
    assert!(
        client
            .certificates()
            .find("web,api")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        sim.requests().iter().all(|e| e.status != 400),
        "every filter parsed"
    );
}

#[tokio::test]
async fn tasks_are_polled_until_they_succeed() {
    let sim = sim().await;
    sim.set_knobs(|k| k.task_duration_ms = 300);
    let (client, registry) = client_with_registry(config(&sim, tenant_token(&sim))).await;
    let gateway = gateway_of(&client).await;
    let created = client
        .pools()
        .create(&pool("p-slow", &gateway))
        .await
        .unwrap();
    assert_eq!(client.pools().get(&created).await.unwrap().name, "p-slow");
    let first_polls = sim.count("GET /api/task/{id}");
    assert!(first_polls >= 3, "polled while queued and running");
    // The second task of the operation is polled around the end the first
    // one took, not from the start of the backoff again.
    client
        .pools()
        .create(&pool("p-slow-2", &gateway))
        .await
        .unwrap();
    let second_polls = sim.count("GET /api/task/{id}") - first_polls;
    assert!(
        second_polls < first_polls,
        "{second_polls} polls for the second task, {first_polls} for the first"
    );
    assert_eq!(
        metric_sum(
            &registry,
            "vcd_task_wait_seconds_count",
            &["create_pool", "outcome=\"ok\""]
        ),
        2.0
    );
}

#[tokio::test]
async fn a_failed_task_is_an_error_with_its_message() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let gateway = gateway_of(&client).await;
    sim.add_fault(
        FaultRule::new(
            Some("POST"),
            "/cloudapi/1.0.0/loadBalancer/pools",
            FaultAction::FailTask {
                minor_error_code: "INTERNAL_SERVER_ERROR".into(),
                message: "NSX-T rejected the pool".into(),
            },
        )
        .times(1),
    );
    let error = client
        .pools()
        .create(&pool("p-fail", &gateway))
        .await
        .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, VcdError::TaskFailed { .. }), "{text}");
    assert!(
        text.contains("NSX-T rejected the pool") && text.contains("create_pool"),
        "{text}"
    );
}

#[tokio::test]
async fn a_task_past_its_deadline_times_out() {
    let sim = sim().await;
    // The task would take 60 s: giving up at the 300 ms deadline, not when
    // the task ends, holds with a margin of 100× (at 10× slowdown, 10×).
    sim.set_knobs(|k| k.task_duration_ms = 60_000);
    let mut cfg = config(&sim, tenant_token(&sim));
    cfg.tasks.deadline = Duration::from_millis(300);
    let client = connect(cfg).await;
    let gateway = gateway_of(&client).await;
    let started = Instant::now();
    let error = client
        .pools()
        .create(&pool("p-late", &gateway))
        .await
        .unwrap_err();
    assert!(matches!(error, VcdError::TaskTimeout { .. }), "{error}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn vcd_errors_become_typed_errors() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let gateway = gateway_of(&client).await;
    client
        .pools()
        .create(&pool("p-dup", &gateway))
        .await
        .unwrap();
    let duplicate = client
        .pools()
        .create(&pool("p-dup", &gateway))
        .await
        .unwrap_err();
    assert!(
        matches!(duplicate, VcdError::DuplicateName { .. }),
        "{duplicate}"
    );

    let missing = client
        .pools()
        .get("urn:vcloud:pool:00000000-0000-0000-0000-000000000000")
        .await
        .unwrap_err();
    assert!(missing.is_not_found(), "{missing}");
    assert!(
        missing
            .to_string()
            .contains("get_pool (GET /cloudapi/1.0.0/loadBalancer/pools/urn:vcloud:pool:")
    );

    sim.add_fault(FaultRule::new(
        Some("GET"),
        "/cloudapi/1.0.0/edgeGateways/{id}",
        FaultAction::Error {
            status: 503,
            minor_error_code: "SERVICE_UNAVAILABLE".into(),
            message: "cell is down".into(),
        },
    ));
    let server = client.gateways().get(&gateway.id).await.unwrap_err();
    assert!(
        matches!(server, VcdError::Server { status: 503, .. }),
        "{server}"
    );
    assert_eq!(
        sim.count(GATEWAY_COUNTER),
        1 + 10,
        "one lookup, then 10 attempts"
    );
}

#[tokio::test]
async fn busy_storm_of_twenty_writers_on_one_gateway_all_succeed() {
    let sim = sim().await;
    sim.set_knobs(|k| {
        k.task_duration_ms = 20;
        k.busy_cooldown_ms = 30;
    });
    // Two clients: serialised within each, racing each other like two replicas.
    let (first, registry) = client_with_registry(config(&sim, tenant_token(&sim))).await;
    let second = tenant_client(&sim).await;
    let gateway = gateway_of(&first).await;
    let writers = (0..20).map(|i| {
        let client = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        let body = pool(&format!("storm-{i}"), &gateway);
        tokio::spawn(async move { client.pools().create(&body).await })
    });
    for writer in writers {
        writer.await.unwrap().expect("every writer succeeds");
    }
    let busy = sim.requests().iter().filter(|e| e.status == 400).count();
    assert!(busy > 0, "the storm produced BUSY_ENTITY answers");
    let retries = metric_sum(&registry, "vcd_retries_total", &["reason=\"busy\""]);
    assert!(retries <= 10.0 * 9.0, "within the retry budget: {retries}");
    assert_eq!(client_pool_count(&first, &gateway.id).await, 20);
}

async fn client_pool_count(client: &VcdClient, gateway_id: &str) -> usize {
    client.pools().summaries(gateway_id).await.unwrap().len()
}

#[tokio::test]
async fn idempotent_calls_survive_thirty_percent_server_errors_and_resets() {
    let sim = sim().await;
    let client = tenant_client(&sim).await;
    let gateway = gateway_of(&client).await;
    sim.add_fault(
        FaultRule::new(
            Some("GET"),
            "*",
            FaultAction::Error {
                status: 502,
                minor_error_code: "BAD_GATEWAY".into(),
                message: String::new(),
            },
        )
        .probability(0.15),
    );
    sim.add_fault(FaultRule::new(Some("GET"), "*", FaultAction::Reset).probability(0.15));
    for _ in 0..40 {
        client
            .gateways()
            .get(&gateway.id)
            .await
            .expect("a gateway read");
        client
            .gateways()
            .used_ip_addresses(&gateway.id)
            .await
            .expect("used IPs");
        client
            .service_engine_groups()
            .pick(&gateway.id)
            .await
            .expect("a SEG");
    }
    let failed = sim.requests().iter().filter(|e| e.status == 502).count()
        + sim
            .faults()
            .iter()
            .filter(|f| f.action == FaultAction::Reset)
            .map(|f| f.fired as usize)
            .sum::<usize>();
    assert!(failed > 20, "faults fired: {failed}");
}

#[tokio::test]
async fn the_rate_limit_spaces_requests() {
    let sim = sim().await;
    let mut cfg = config(&sim, tenant_token(&sim));
    cfg.rate_limit = Some(20.0);
    let client = connect(cfg).await;
    let started = Instant::now();
    for _ in 0..10 {
        client.tenancy().current_org().await.unwrap();
    }
    // 10 org reads plus one org lookup at 20/s, after the connect's calls.
    assert!(
        started.elapsed() >= Duration::from_millis(450),
        "{:?}",
        started.elapsed()
    );
}

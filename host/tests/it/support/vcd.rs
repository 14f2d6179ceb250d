//! Shared helpers of the VCD client tests: a simulator per test, clients
//! with fast retry and task timings (so failure paths stay quick), and
//! reading metrics back.

use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::registry::Registry;
use vcd_ccm::vcd::{
    ClientConfig, ClientMetrics, CredentialSource, Credentials, RetryPolicy, Secret, TaskPolicy,
    VcdClient,
};
use vcdsim::{Scenario, Sim};

pub const GATEWAY_COUNTER: &str = "GET /cloudapi/1.0.0/edgeGateways/{id}";

pub async fn sim() -> Sim {
    Sim::start(Scenario::default_scenario())
        .await
        .expect("vcdsim starts")
}

pub async fn sim_from(scenario: Scenario) -> Sim {
    Sim::start(scenario).await.expect("vcdsim starts")
}

/// Quick retries and task polls: tests exercise many of them.
pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 10,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(80),
    }
}

pub fn fast_tasks() -> TaskPolicy {
    TaskPolicy {
        first_poll_delay: Duration::from_millis(10),
        max_poll_delay: Duration::from_millis(50),
        deadline: Duration::from_secs(10),
    }
}

pub fn config(sim: &Sim, credentials: Credentials) -> ClientConfig {
    let org = sim.tenant().expect("a tenant").org.clone();
    let mut config = ClientConfig::new(sim.base_url(), org, CredentialSource::Static(credentials));
    config.retry = fast_retry();
    config.tasks = fast_tasks();
    config.request_timeout = Duration::from_secs(10);
    config
}

pub fn tenant_token(sim: &Sim) -> Credentials {
    let tenant = sim.tenant().expect("a tenant");
    Credentials::ApiToken {
        org: tenant.org.clone(),
        token: Secret::new(tenant.api_token.clone().expect("a tenant API token")),
    }
}

pub fn tenant_password(sim: &Sim) -> Credentials {
    let tenant = sim.tenant().expect("a tenant");
    Credentials::Password {
        org: tenant.org.clone(),
        user: tenant.user.clone(),
        password: Secret::new(tenant.password.clone()),
    }
}

pub fn system_token(sim: &Sim) -> Credentials {
    let system = sim.system().expect("a system user");
    Credentials::ApiToken {
        org: system.org.clone(),
        token: Secret::new(system.api_token.clone().expect("a system API token")),
    }
}

pub async fn connect(config: ClientConfig) -> VcdClient {
    VcdClient::connect(config, ClientMetrics::default())
        .await
        .expect("the client connects")
}

/// A tenant client (API token) with fast timings.
pub async fn tenant_client(sim: &Sim) -> VcdClient {
    connect(config(sim, tenant_token(sim))).await
}

/// A client whose metrics land in a registry the test can read.
pub async fn client_with_registry(config: ClientConfig) -> (VcdClient, Registry) {
    let mut registry = Registry::default();
    let metrics = ClientMetrics::register(&mut registry);
    let client = VcdClient::connect(config, metrics)
        .await
        .expect("the client connects");
    (client, registry)
}

/// The sum of every sample of `name` whose labels contain all of `labels`.
/// A metric the registry does not declare fails the test, so a renamed
/// metric cannot read as 0.
pub fn metric_sum(registry: &Registry, name: &str, labels: &[&str]) -> f64 {
    let mut text = String::new();
    encode(&mut text, registry).expect("metrics encode");
    metric_sum_in(&text, name, labels)
}

/// [`metric_sum`] over metrics in the text format `/metrics` serves.
pub fn metric_sum_in(text: &str, name: &str, labels: &[&str]) -> f64 {
    let declared = ["_total", "_count", "_sum", "_bucket", ""]
        .iter()
        .any(|suffix| {
            name.strip_suffix(suffix).is_some_and(|base| {
                text.lines().any(|l| {
                    l.strip_prefix("# TYPE ")
                        .is_some_and(|t| t.split(' ').next() == Some(base))
                })
            })
        });
    assert!(declared, "no metric {name} in\n{text}");
    text.lines()
        .filter(|line| {
            line.starts_with(name)
                && (line[name.len()..].starts_with('{') || line[name.len()..].starts_with(' '))
        })
        .filter(|line| labels.iter().all(|l| line.contains(l)))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// Calls to the login endpoints so far.
pub fn login_calls(sim: &Sim) -> u64 {
    sim.counters()
        .iter()
        .filter(|(key, _)| key.contains("/oauth/") || key.contains("/sessions"))
        .map(|(_, count)| count)
        .sum()
}

/// Every call so far.
pub fn total_calls(sim: &Sim) -> u64 {
    sim.counters().values().sum()
}

/// The ids of the default scenario's org, VDC, network and gateway.
pub async fn placement(client: &VcdClient) -> vcd_ccm::vcd::resources::network::Placement {
    client
        .tenancy()
        .placement("vdc1", "net1")
        .await
        .expect("the default placement resolves")
}

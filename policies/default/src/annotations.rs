//! The Service annotations the default policy reads, parsed and checked once.

use std::collections::BTreeSet;
use std::net::IpAddr;

use crate::exposure::{HOSTNAME, IP_MODE, NODE_SELECTOR};
use crate::health_checks::{
    CHECK_INTERVAL, CHECK_PATH, CHECK_PORT, CHECK_TIMEOUT, EXPECTED_CODES, HEALTH_MONITOR,
    HEALTHY_THRESHOLD, UNHEALTHY_THRESHOLD,
};
use crate::http_rules::{FORWARDED_HEADERS, HSTS, HTTPS_REDIRECT, RATE_LIMIT};
use crate::placement::SERVICE_ENGINE_GROUP;
use crate::read::{get, invalid, tcp_ports};
use crate::tls_secret::{TLS_SECRET, TlsSecrets};
use crate::traffic::{DRAIN_PERIOD, PERSISTENCE};
use crate::vcd::lb_policy::types::{
    DecisionError, HealthMonitor, PoolAlgorithm, Protocol, Service,
};

/// Comma-separated Service ports whose TLS terminates at the load balancer (upstream).
pub const SSL_PORTS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-ports";
/// Certificate alias for the TLS ports, overriding the `certAlias` setting (upstream).
pub const SSL_CERT_ALIAS: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias";
/// `true`: pass TLS through to the pods; every TCP port is plain L4 (upstream).
pub const SSL_NO_TERMINATION: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-no-termination";
/// The address to expose the Service on (the successor of the deprecated `spec.loadBalancerIP`).
pub const LOAD_BALANCER_IP: &str = "vcd-ccm.io/load-balancer-ip";
/// The address pool to allocate from.
pub const ADDRESS_POOL: &str = "vcd-ccm.io/address-pool";
/// `"true"`: an internal address, reached only inside the org's networks.
pub const INTERNAL: &str = "vcd-ccm.io/internal";
/// `"true"`: the address outlives the Service (IP Spaces).
pub const RETAIN_ADDRESS: &str = "vcd-ccm.io/retain-address";
/// The pool algorithm for every port, overriding the `algorithm` setting.
pub const POOL_ALGORITHM: &str = "vcd-ccm.io/pool-algorithm";
/// Services of one namespace with the same key share one address.
pub const SHARING_KEY: &str = "vcd-ccm.io/sharing-key";
/// `"true"`: clients' source addresses reach the pods (NSX ALB transparent mode).
pub const PRESERVE_CLIENT_IP: &str = "vcd-ccm.io/preserve-client-ip";

/// Every annotation the default policy reads, which `forbiddenAnnotations`
/// may name.
pub const READ: [&str; 29] = [
    SSL_PORTS,
    SSL_CERT_ALIAS,
    SSL_NO_TERMINATION,
    LOAD_BALANCER_IP,
    ADDRESS_POOL,
    INTERNAL,
    RETAIN_ADDRESS,
    HEALTH_MONITOR,
    CHECK_INTERVAL,
    CHECK_TIMEOUT,
    HEALTHY_THRESHOLD,
    UNHEALTHY_THRESHOLD,
    CHECK_PATH,
    CHECK_PORT,
    EXPECTED_CODES,
    POOL_ALGORITHM,
    SHARING_KEY,
    PRESERVE_CLIENT_IP,
    TLS_SECRET,
    PERSISTENCE,
    SERVICE_ENGINE_GROUP,
    HTTPS_REDIRECT,
    FORWARDED_HEADERS,
    HSTS,
    RATE_LIMIT,
    DRAIN_PERIOD,
    IP_MODE,
    HOSTNAME,
    NODE_SELECTOR,
];

/// A Service that sets an annotation the provider forbids is refused.
pub fn check_allowed(service: &Service, forbidden: &[String]) -> Result<(), DecisionError> {
    match forbidden.iter().find(|key| get(service, key).is_some()) {
        None => Ok(()),
        Some(key) => Err(invalid(
            key,
            "the provider does not allow this annotation here (default policy setting forbiddenAnnotations); remove it".into(),
        )),
    }
}

/// What the annotations ask for, validated.
pub struct Annotations {
    pub ssl_ports: BTreeSet<u16>,
    pub cert_alias: Option<String>,
    pub no_termination: bool,
    /// The requested address and the key it came from (annotation or `spec.loadBalancerIP`).
    pub requested_ip: Option<(IpAddr, &'static str)>,
    pub address_pool: Option<String>,
    /// An internal address rather than an external one.
    pub internal: bool,
    /// Keep the address when the Service is deleted.
    pub retain_address: bool,
    /// The sharing key; the host has checked its form.
    pub sharing_key: Option<String>,
    pub health_monitor: Option<HealthMonitor>,
    pub algorithm: Option<PoolAlgorithm>,
    pub preserve_client_ip: bool,
    /// Secrets named by `vcd-ccm.io/tls-secret`.
    pub tls_secrets: TlsSecrets,
}

/// A boolean annotation: `"true"` or `"false"` (any case); absent or empty is false.
fn flag(service: &Service, key: &str) -> Result<bool, DecisionError> {
    match get(service, key) {
        None => Ok(false),
        Some(value) => match value.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(true),
            "false" | "" => Ok(false),
            _ => Err(invalid(
                key,
                format!("{value:?} is not a boolean: use \"true\" or \"false\""),
            )),
        },
    }
}

impl Annotations {
    pub fn read(service: &Service) -> Result<Annotations, DecisionError> {
        let no_termination = flag(service, SSL_NO_TERMINATION)?;
        Ok(Annotations {
            ssl_ports: ssl_ports(service)?,
            cert_alias: get(service, SSL_CERT_ALIAS)
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(String::from),
            no_termination,
            requested_ip: requested_ip(service)?,
            address_pool: get(service, ADDRESS_POOL)
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(String::from),
            internal: flag(service, INTERNAL)?,
            retain_address: flag(service, RETAIN_ADDRESS)?,
            sharing_key: get(service, SHARING_KEY)
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(String::from),
            health_monitor: parse_named(service, HEALTH_MONITOR, parse_health_monitor)?,
            algorithm: parse_named(service, POOL_ALGORITHM, parse_algorithm)?,
            preserve_client_ip: flag(service, PRESERVE_CLIENT_IP)?,
            tls_secrets: TlsSecrets::read(service)?,
        })
    }
}

fn parse_named<T>(
    service: &Service,
    key: &str,
    parse: fn(&str) -> Result<T, String>,
) -> Result<Option<T>, DecisionError> {
    get(service, key)
        .map(|value| parse(value.trim()).map_err(|message| invalid(key, message)))
        .transpose()
}

/// The ssl-ports list: each entry must be a TCP port of the Service.
fn ssl_ports(service: &Service) -> Result<BTreeSet<u16>, DecisionError> {
    let Some(value) = get(service, SSL_PORTS).filter(|v| !v.trim().is_empty()) else {
        return Ok(BTreeSet::new());
    };
    let tcp_ports = tcp_ports(service);
    let mut ports = BTreeSet::new();
    for entry in value.split(',').map(str::trim) {
        let port: u16 = entry
            .parse()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| invalid(SSL_PORTS, format!("{entry:?} is not a port number (1-65535); expected a comma-separated list such as \"443,8443\"")))?;
        if !tcp_ports.contains(&port) {
            return Err(invalid(
                SSL_PORTS,
                format!("port {port} is not a TCP port of this Service (TCP ports: {tcp_ports:?})"),
            ));
        }
        ports.insert(port);
    }
    Ok(ports)
}

/// The requested address from our annotation or `spec.loadBalancerIP`; both may be
/// given only when they agree.
fn requested_ip(service: &Service) -> Result<Option<(IpAddr, &'static str)>, DecisionError> {
    const SPEC_FIELD: &str = "spec.loadBalancerIP";
    let parse = |key: &'static str, value: &str| -> Result<(IpAddr, &'static str), DecisionError> {
        value
            .trim()
            .parse::<IpAddr>()
            .map(|ip| (ip, key))
            .map_err(|_| invalid(key, format!("{value:?} is not an IPv4 or IPv6 address")))
    };
    let from_annotation = get(service, LOAD_BALANCER_IP)
        .map(|v| parse(LOAD_BALANCER_IP, v))
        .transpose()?;
    let from_spec = service
        .load_balancer_ip
        .as_deref()
        .filter(|v| !v.trim().is_empty())
        .map(|v| parse(SPEC_FIELD, v))
        .transpose()?;
    match (from_annotation, from_spec) {
        (Some((a, _)), Some((s, _))) if a != s => Err(invalid(
            LOAD_BALANCER_IP,
            format!("{a} contradicts {SPEC_FIELD} {s}; set only one of them"),
        )),
        (Some(requested), _) | (None, Some(requested)) => Ok(Some(requested)),
        (None, None) => Ok(None),
    }
}

/// WIT names of the health monitors, as users write them.
const MONITORS: [(&str, HealthMonitor); 6] = [
    ("none", HealthMonitor::None),
    ("tcp", HealthMonitor::Tcp),
    ("udp", HealthMonitor::Udp),
    ("http", HealthMonitor::Http),
    ("https", HealthMonitor::Https),
    ("ping", HealthMonitor::Ping),
];

/// WIT names of the pool algorithms, as users write them.
const ALGORITHMS: [(&str, PoolAlgorithm); 9] = [
    ("least-connections", PoolAlgorithm::LeastConnections),
    ("round-robin", PoolAlgorithm::RoundRobin),
    ("consistent-hash", PoolAlgorithm::ConsistentHash),
    ("fastest-response", PoolAlgorithm::FastestResponse),
    ("least-load", PoolAlgorithm::LeastLoad),
    ("fewest-servers", PoolAlgorithm::FewestServers),
    ("random", PoolAlgorithm::Random),
    ("fewest-tasks", PoolAlgorithm::FewestTasks),
    ("core-affinity", PoolAlgorithm::CoreAffinity),
];

fn parse_named_value<T: Copy>(table: &[(&str, T)], what: &str, value: &str) -> Result<T, String> {
    let wanted = value.to_ascii_lowercase();
    table
        .iter()
        .find(|(name, _)| *name == wanted)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|(name, _)| *name).collect();
            format!("{value:?} is not a {what}: use one of {}", names.join(", "))
        })
}

fn name_of<T: PartialEq>(table: &[(&'static str, T)], value: &T) -> &'static str {
    table
        .iter()
        .find(|(_, v)| v == value)
        .map_or("?", |(name, _)| name)
}

pub fn parse_health_monitor(value: &str) -> Result<HealthMonitor, String> {
    parse_named_value(&MONITORS, "health monitor", value)
}

pub fn parse_algorithm(value: &str) -> Result<PoolAlgorithm, String> {
    parse_named_value(&ALGORITHMS, "pool algorithm", value)
}

pub fn monitor_name(monitor: HealthMonitor) -> &'static str {
    name_of(&MONITORS, &monitor)
}

pub fn algorithm_name(algorithm: PoolAlgorithm) -> &'static str {
    name_of(&ALGORITHMS, &algorithm)
}

pub fn protocol_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Tcp => "TCP",
        Protocol::Udp => "UDP",
        Protocol::Sctp => "SCTP",
    }
}

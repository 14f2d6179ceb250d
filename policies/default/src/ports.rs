//! Per-port decisions: profile, certificate, health monitor and pool algorithm.

use crate::annotations::{
    Annotations, POOL_ALGORITHM, SSL_CERT_ALIAS, algorithm_name, monitor_name, protocol_name,
};
use crate::config::Config;
use crate::health_checks::HEALTH_MONITOR;
use crate::tls_secret::TLS_SECRET;
use crate::vcd::lb_policy::types::{
    AppProfile, DecisionError, DecisionInput, HealthMonitor, InvalidField, PoolAlgorithm,
    PortDecision, Protocol, ServicePort, UnsupportedPort,
};

/// What the port's `appProtocol` asks for, as far as the upstream CCM understood it.
#[derive(Clone, Copy)]
enum Application {
    Tcp,
    Http,
    Https,
}

pub fn decide(
    input: &DecisionInput,
    config: &Config,
    annotations: &Annotations,
    warnings: &mut Vec<String>,
) -> Result<Vec<PortDecision>, DecisionError> {
    if input.service.ports.is_empty() {
        return Err(DecisionError::Other("the Service has no ports".into()));
    }
    let algorithm = annotations.algorithm.unwrap_or(config.algorithm);
    if !is_basic(algorithm) && !input.cluster.capabilities.premium {
        let message = format!(
            "{} needs the PREMIUM load balancer feature set on the gateway",
            algorithm_name(algorithm)
        );
        return Err(match annotations.algorithm {
            Some(_) => invalid(POOL_ALGORITHM, message),
            None => DecisionError::Other(format!("policy setting algorithm: {message}")),
        });
    }
    if annotations.no_termination && !annotations.ssl_ports.is_empty() {
        warnings.push("ssl-ports is ignored because ssl-no-termination is true: TLS passes through to the pods".into());
    }
    input
        .service
        .ports
        .iter()
        .map(|port| decide_port(port, input, config, annotations, algorithm, warnings))
        .collect()
}

fn decide_port(
    port: &ServicePort,
    input: &DecisionInput,
    config: &Config,
    annotations: &Annotations,
    algorithm: PoolAlgorithm,
    warnings: &mut Vec<String>,
) -> Result<PortDecision, DecisionError> {
    let profile = match port.protocol {
        Protocol::Sctp => {
            return Err(DecisionError::UnsupportedPort(UnsupportedPort {
                port: port.port,
                protocol: port.protocol,
                message: "NSX ALB virtual services do not carry SCTP; use TCP or UDP".into(),
            }));
        }
        Protocol::Udp => AppProfile::L4Udp,
        Protocol::Tcp => tcp_profile(port, annotations, warnings),
    };
    if !input.profiles.contains(&profile) {
        return Err(DecisionError::ProfileUnavailable(profile));
    }
    let certificate = match profile {
        AppProfile::L4Tls | AppProfile::Https => {
            Some(certificate(port, input, config, annotations)?)
        }
        _ => None,
    };
    let health_monitor = match annotations.health_monitor {
        Some(monitor) => fitting_monitor(monitor, port)?,
        None => default_monitor(profile),
    };
    Ok(PortDecision {
        service_port: port.port,
        protocol: port.protocol,
        listen_port: port.port,
        profile,
        certificate,
        health_monitor,
        algorithm,
        monitor: None,
    })
}

/// The upstream rules: `appProtocol` http/https/tcp picks the application, the
/// ssl-ports annotation (and a per-port `vcd-ccm.io/tls-secret` entry) adds TLS
/// termination, no-termination forces plain L4.
fn tcp_profile(
    port: &ServicePort,
    annotations: &Annotations,
    warnings: &mut Vec<String>,
) -> AppProfile {
    if annotations.no_termination {
        return AppProfile::L4Tcp;
    }
    let application = match port
        .app_protocol
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("tcp") => Application::Tcp,
        Some("http") => Application::Http,
        Some("https") => Application::Https,
        Some(other) => {
            warnings.push(format!(
                "port {}: appProtocol {other:?} is not http, https or tcp; the port is served as plain TCP",
                port.port
            ));
            Application::Tcp
        }
    };
    let terminates = annotations.ssl_ports.contains(&port.port)
        || annotations.tls_secrets.per_port.contains_key(&port.port);
    match (application, terminates) {
        (Application::Tcp, false) => AppProfile::L4Tcp,
        (Application::Tcp, true) => AppProfile::L4Tls,
        (Application::Http, false) => AppProfile::Http,
        (Application::Http, true) | (Application::Https, _) => AppProfile::Https,
    }
}

/// The first of: the port's Secret, the Service's Secret, the cert-alias
/// annotation, the `certAlias` setting.
fn certificate(
    port: &ServicePort,
    input: &DecisionInput,
    config: &Config,
    annotations: &Annotations,
) -> Result<String, DecisionError> {
    let alias = annotations
        .tls_secrets
        .alias_for(port.port)
        .or_else(|| annotations.cert_alias.clone())
        .or_else(|| config.cert_alias.clone())
        .ok_or_else(|| {
            invalid(
                SSL_CERT_ALIAS,
                format!(
                    "port {} terminates TLS but no certificate is named: set this annotation, {TLS_SECRET} or the policy's certAlias setting",
                    port.port
                ),
            )
        })?;
    if input.certificates.iter().any(|c| c.alias == alias) {
        Ok(alias)
    } else {
        Err(DecisionError::CertificateNotFound(alias))
    }
}

/// Monitors probe the pool members (node ports), which speak plain HTTP when TLS
/// terminates at the load balancer. Most UDP services never answer an arbitrary
/// datagram, so UDP ports get no monitor unless the Service asks for one.
fn default_monitor(profile: AppProfile) -> HealthMonitor {
    match profile {
        AppProfile::L4Tcp | AppProfile::L4Tls => HealthMonitor::Tcp,
        AppProfile::Http | AppProfile::Https => HealthMonitor::Http,
        AppProfile::L4Udp => HealthMonitor::None,
    }
}

fn fitting_monitor(
    monitor: HealthMonitor,
    port: &ServicePort,
) -> Result<HealthMonitor, DecisionError> {
    let fits = match port.protocol {
        Protocol::Udp => matches!(
            monitor,
            HealthMonitor::None | HealthMonitor::Udp | HealthMonitor::Ping
        ),
        _ => !matches!(monitor, HealthMonitor::Udp),
    };
    if fits {
        Ok(monitor)
    } else {
        let (monitor, protocol) = (monitor_name(monitor), protocol_name(port.protocol));
        Err(invalid(
            HEALTH_MONITOR,
            format!(
                "a {monitor} monitor cannot probe {protocol} port {}",
                port.port
            ),
        ))
    }
}

fn is_basic(algorithm: PoolAlgorithm) -> bool {
    matches!(
        algorithm,
        PoolAlgorithm::LeastConnections | PoolAlgorithm::RoundRobin | PoolAlgorithm::ConsistentHash
    )
}

fn invalid(key: &str, message: String) -> DecisionError {
    DecisionError::InvalidAnnotation(InvalidField {
        key: key.into(),
        message,
    })
}

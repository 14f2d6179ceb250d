//! Example provider policy: each namespace gets the address pool and TLS
//! certificate its labels name, and UDP only where the provider allowed it.
//!
//! Settings (JSON, all optional):
//! - `poolLabel` (default `vcd-ccm.io/address-pool`): the namespace label naming the pool;
//! - `certificateSuffix` (default `-tls`): port 443 terminates TLS with the
//!   certificate `<namespace><suffix>`;
//! - `udpLabel` (default `vcd-ccm.io/allow-udp`): UDP ports need this label set to `true`.

wit_bindgen::generate!({ path: "../../../wit/0.1.0", world: "lb-policy" });

use exports::vcd::lb_policy::policy::Guest;
use serde::Deserialize;
use vcd::lb_policy::types::{
    AddressChoice, AppProfile, Decision, DecisionError, DecisionInput, HealthMonitor, IpAddress,
    IpRange, PolicyInfo, PoolAlgorithm, PortDecision, Protocol, ServicePort, UnsupportedPort,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
struct Settings {
    pool_label: String,
    certificate_suffix: String,
    udp_label: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            pool_label: "vcd-ccm.io/address-pool".into(),
            certificate_suffix: "-tls".into(),
            udp_label: "vcd-ccm.io/allow-udp".into(),
        }
    }
}

impl Settings {
    fn parse(text: &str) -> Result<Settings, String> {
        if text.trim().is_empty() {
            return Ok(Settings::default());
        }
        serde_json::from_str(text).map_err(|e| format!("namespace-pools settings: {e}"))
    }
}

fn label<'a>(labels: &'a [(String, String)], key: &str) -> Option<&'a str> {
    labels
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

struct NamespacePools;

impl Guest for NamespacePools {
    fn describe() -> PolicyInfo {
        PolicyInfo {
            name: "namespace-pools".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn validate_config(config: String) -> Result<(), String> {
        Settings::parse(&config).map(|_| ())
    }

    fn decide(config: String, input: DecisionInput) -> Result<Decision, DecisionError> {
        let settings = Settings::parse(&config).map_err(DecisionError::Other)?;
        let namespace = &input.namespace;
        let pool = label(&namespace.labels, &settings.pool_label).ok_or_else(|| {
            DecisionError::Other(format!(
                "namespace {} has no {} label: ask your provider to assign it an address pool",
                namespace.name, settings.pool_label
            ))
        })?;
        let Some(pool) = input.pools.iter().find(|p| p.name == pool) else {
            return Err(DecisionError::Other(format!(
                "namespace {} names pool {pool:?}, which this cluster does not offer",
                namespace.name
            )));
        };
        if input.service.ports.is_empty() {
            return Err(DecisionError::Other("the Service has no ports".into()));
        }
        let udp_allowed = label(&namespace.labels, &settings.udp_label) == Some("true");
        let certificate = format!("{}{}", namespace.name, settings.certificate_suffix);
        let ports = input
            .service
            .ports
            .iter()
            .map(|port| decide_port(port, udp_allowed, &certificate, &input))
            .collect::<Result<_, _>>()?;
        // Keep the current address while it lies in the namespace's pool: a
        // relabelled namespace moves to its new pool.
        let current_in_pool = input
            .current
            .as_ref()
            .is_some_and(|current| match current.address {
                AddressChoice::Specific(address) => {
                    pool.ranges.iter().any(|range| in_range(address, range))
                }
                _ => false,
            });
        let address = if current_in_pool {
            AddressChoice::KeepCurrent
        } else if pool.free_count == 0 {
            return Err(DecisionError::NoAddressAvailable);
        } else {
            AddressChoice::FromPool(pool.name.clone())
        };
        Ok(Decision {
            address,
            ports,
            warnings: Vec::new(),
        })
    }
}

/// Whether `address` lies in `range` (same family, between the bounds).
fn in_range(address: IpAddress, range: &IpRange) -> bool {
    match (address, range.first, range.last) {
        (IpAddress::Ipv4(a), IpAddress::Ipv4(f), IpAddress::Ipv4(l)) => f <= a && a <= l,
        (IpAddress::Ipv6(a), IpAddress::Ipv6(f), IpAddress::Ipv6(l)) => f <= a && a <= l,
        _ => false,
    }
}

fn decide_port(
    port: &ServicePort,
    udp_allowed: bool,
    certificate: &str,
    input: &DecisionInput,
) -> Result<PortDecision, DecisionError> {
    let refuse = |message: String| {
        DecisionError::UnsupportedPort(UnsupportedPort {
            port: port.port,
            protocol: port.protocol,
            message,
        })
    };
    let (profile, certificate, health_monitor) = match (port.protocol, port.port) {
        (Protocol::Tcp, 443) => {
            if !input.certificates.iter().any(|c| c.alias == certificate) {
                return Err(DecisionError::CertificateNotFound(certificate.into()));
            }
            (
                AppProfile::Https,
                Some(certificate.to_string()),
                HealthMonitor::Http,
            )
        }
        (Protocol::Tcp, _) => (AppProfile::L4Tcp, None, HealthMonitor::Tcp),
        (Protocol::Udp, _) if udp_allowed => (AppProfile::L4Udp, None, HealthMonitor::None),
        (Protocol::Udp, _) => {
            return Err(refuse(format!(
                "UDP is not enabled for namespace {}",
                input.namespace.name
            )));
        }
        (Protocol::Sctp, _) => return Err(refuse("SCTP is not supported".into())),
    };
    Ok(PortDecision {
        service_port: port.port,
        protocol: port.protocol,
        listen_port: port.port,
        profile,
        certificate,
        health_monitor,
        algorithm: PoolAlgorithm::LeastConnections,
    })
}

export!(NamespacePools);

//! A policy on contract 0.3.0, which the host still serves: it takes the
//! first pool it is offered, gives each port plain L4 with the matching
//! monitor, keeps client-IP persistence when the Service asks for session
//! affinity, and says in a warning how many pools it was offered.

wit_bindgen::generate!({ path: "../../../wit/0.3.0", world: "lb-policy" });

use exports::vcd::lb_policy::policy::Guest;
use vcd::lb_policy::types::{
    AddressChoice, AppProfile, Decision, DecisionError, DecisionInput, HealthMonitor, HttpRules,
    Persistence, PolicyInfo, PoolAlgorithm, PortDecision, PortTraffic, Protocol, SessionAffinity,
};

struct Frozen;

impl Guest for Frozen {
    fn describe() -> PolicyInfo {
        PolicyInfo {
            name: "frozen-0-3".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn validate_config(_config: String) -> Result<(), String> {
        Ok(())
    }

    fn decide(_config: String, input: DecisionInput) -> Result<Decision, DecisionError> {
        let pool = input
            .pools
            .first()
            .ok_or(DecisionError::NoAddressAvailable)?;
        let udp = |p: Protocol| p == Protocol::Udp;
        let ports = input
            .service
            .ports
            .iter()
            .map(|p| PortDecision {
                service_port: p.port,
                protocol: p.protocol,
                listen_port: p.port,
                profile: if udp(p.protocol) {
                    AppProfile::L4Udp
                } else {
                    AppProfile::L4Tcp
                },
                certificate: None,
                health_monitor: if udp(p.protocol) {
                    HealthMonitor::Udp
                } else {
                    HealthMonitor::Tcp
                },
                algorithm: PoolAlgorithm::RoundRobin,
            })
            .collect();
        let traffic = match input.service.session_affinity {
            SessionAffinity::None => Vec::new(),
            SessionAffinity::ClientIp(_) => input
                .service
                .ports
                .iter()
                .map(|p| PortTraffic {
                    service_port: p.port,
                    protocol: p.protocol,
                    persistence: Persistence::ClientIp,
                    http: HttpRules {
                        request: Vec::new(),
                        response: Vec::new(),
                        security: Vec::new(),
                    },
                    drain_seconds: 0,
                })
                .collect(),
        };
        Ok(Decision {
            address: AddressChoice::FromPool(pool.name.clone()),
            ports,
            warnings: vec![format!("offered {} pools", input.pools.len())],
            preserve_client_ip: false,
            traffic,
            service_engine_group: None,
        })
    }
}

export!(Frozen);

//! The built-in vcd-ccm load-balancer policy.
//!
//! It makes the decisions the upstream Go CCM made from the same inputs
//! (`appProtocol`, the `service.beta.kubernetes.io/vcloud-avi-ssl-*` annotations,
//! `spec.loadBalancerIP`, the `certAlias` setting) and adds UDP ports, health
//! monitors, requested addresses and pools by annotation, a stable address,
//! certificates from Kubernetes TLS Secrets, preserved client addresses by
//! annotation (contract 0.2.0), and session persistence from
//! `spec.sessionAffinity` or an annotation, HTTP rules (HTTPS redirect,
//! forwarded headers, HSTS, rate limit) and a service engine group by
//! annotation (0.3.0), and the address's mode and hostname, the Nodes
//! serving the Service, internal addresses and addresses that outlive their
//! Service, and tuned health checks by annotation (0.4.0).

wit_bindgen::generate!({ path: "../../wit", world: "lb-policy" });

mod address;
mod annotations;
mod config;
mod exposure;
mod health_checks;
mod http_rules;
mod ip;
mod placement;
mod ports;
mod read;
mod tls_secret;
mod traffic;

use exports::vcd::lb_policy::policy::Guest;
use vcd::lb_policy::types::{Decision, DecisionError, DecisionInput, PolicyInfo};

struct DefaultPolicy;

impl Guest for DefaultPolicy {
    fn describe() -> PolicyInfo {
        PolicyInfo {
            name: "default".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn validate_config(config: String) -> Result<(), String> {
        config::Config::parse(&config).map(|_| ())
    }

    fn decide(config: String, input: DecisionInput) -> Result<Decision, DecisionError> {
        let config = config::Config::parse(&config).map_err(DecisionError::Other)?;
        annotations::check_allowed(&input.service, &config.forbidden_annotations)?;
        let annotations = annotations::Annotations::read(&input.service)?;
        let health_checks = health_checks::HealthChecks::read(&input.service)?;
        let mut warnings = Vec::new();
        let mut ports = ports::decide(&input, &config, &annotations, &mut warnings)?;
        health_checks.apply(&input.cluster, &mut ports, &mut warnings)?;
        let address = address::decide(&input, &config, &annotations)?;
        let traffic = traffic::decide(&input, &ports, &mut warnings)?;
        if annotations.preserve_client_ip && traffic.iter().any(|t| t.drain_seconds > 0) {
            return Err(read::invalid(
                traffic::DRAIN_PERIOD,
                format!(
                    "cannot go with {}: NSX ALB's transparent mode takes pool members from an IP set, and a drain disables members one by one in a member list; remove one of the two",
                    annotations::PRESERVE_CLIENT_IP
                ),
            ));
        }
        let service_engine_group = placement::decide(&input)?;
        let ip_mode = exposure::ip_mode(
            &input.service,
            &ports,
            &traffic,
            annotations.preserve_client_ip,
        )?;
        Ok(Decision {
            address,
            ports,
            warnings,
            preserve_client_ip: annotations.preserve_client_ip,
            traffic,
            service_engine_group,
            ip_mode,
            hostname: exposure::hostname(&input.service)?,
            retain_address: address::retain(&input, &annotations)?,
            node_selector: exposure::node_selector(&input.service)?,
        })
    }
}

export!(DefaultPolicy);

//! Traffic per port (contract 0.3.0): persistence, where
//! `spec.sessionAffinity: ClientIP` keeps a client on one node by its
//! address and the `vcd-ccm.io/persistence` annotation chooses any kind
//! NSX ALB offers, the HTTP rules the annotations of `http_rules` ask for,
//! and the drain period of `vcd-ccm.io/drain-period`.

use crate::http_rules::Asked;
use crate::read::{get, invalid};
use crate::vcd::lb_policy::types::{
    AppProfile, DecisionError, DecisionInput, Persistence, PortDecision, PortTraffic,
    SessionAffinity,
};

/// `none`, `client-ip`, `tls`, `http-cookie:<name>` or `app-cookie:<name>`,
/// for every port; it overrides `spec.sessionAffinity`.
pub const PERSISTENCE: &str = "vcd-ccm.io/persistence";

/// How long a Node leaving the Service's pools keeps its open
/// connections: `<n>s` or `<n>m`, at most an hour; `0` removes it at once.
pub const DRAIN_PERIOD: &str = "vcd-ccm.io/drain-period";

/// The drain period in seconds.
fn drain_period(value: &str) -> Result<u32, String> {
    let usage = || {
        format!(
            "{value:?} is not a drain period: use <n>s or <n>m up to 3600s or 60m, such as 30s or 5m, or 0 to remove leaving Nodes at once"
        )
    };
    if value == "0" {
        return Ok(0);
    }
    // The last character, not the last byte: a multi-byte one must be refused, not split.
    let unit_at = value.char_indices().last().map_or(0, |(i, _)| i);
    let (digits, unit) = value.split_at(unit_at);
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        _ => return Err(usage()),
    };
    digits
        .parse::<u32>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .filter(|seconds| *seconds <= 3600)
        .ok_or_else(usage)
}

/// How long NSX ALB's system client-IP persistence profile keeps a client
/// after its last connection: Avi's default `persistence_timeout`, 5
/// minutes. VCD's API cannot set it.
const ALB_CLIENT_IP_TIMEOUT_SECONDS: u32 = 300;

/// The `traffic` entries of the decided ports that need one.
pub fn decide(
    input: &DecisionInput,
    ports: &[PortDecision],
    warnings: &mut Vec<String>,
) -> Result<Vec<PortTraffic>, DecisionError> {
    let persistence = persistence(input, ports, warnings)?;
    let asked = Asked::read(input, ports)?;
    let drain_seconds = match get(&input.service, DRAIN_PERIOD).map(str::trim) {
        None | Some("") => 0,
        Some(value) => drain_period(value).map_err(|m| invalid(DRAIN_PERIOD, m))?,
    };
    Ok(ports
        .iter()
        .map(|port| PortTraffic {
            service_port: port.service_port,
            protocol: port.protocol,
            persistence: persistence.clone(),
            http: asked.rules(port),
            drain_seconds,
        })
        .filter(|t| {
            let http = &t.http;
            let nothing = http.request.is_empty()
                && http.response.is_empty()
                && http.security.is_empty()
                && t.drain_seconds == 0;
            !(matches!(t.persistence, Persistence::None) && nothing)
        })
        .collect())
}

/// The persistence every port gets, checked against each port's profile.
fn persistence(
    input: &DecisionInput,
    ports: &[PortDecision],
    warnings: &mut Vec<String>,
) -> Result<Persistence, DecisionError> {
    let service = &input.service;
    let persistence = match get(service, PERSISTENCE).map(str::trim) {
        Some(value) if !value.is_empty() => parse(value).map_err(|m| invalid(PERSISTENCE, m))?,
        _ => match service.session_affinity {
            SessionAffinity::None => return Ok(Persistence::None),
            SessionAffinity::ClientIp(timeout) => {
                if timeout != ALB_CLIENT_IP_TIMEOUT_SECONDS {
                    warnings.push(format!(
                        "sessionAffinity ClientIP: clients stay on one node until idle for NSX ALB's client-IP persistence timeout ({ALB_CLIENT_IP_TIMEOUT_SECONDS} s unless the provider changed it), not the Service's {timeout} s: VCD's API cannot set the timeout"
                    ));
                }
                Persistence::ClientIp
            }
        },
    };
    if matches!(persistence, Persistence::None) {
        return Ok(persistence);
    }
    let premium = matches!(persistence, Persistence::AppCookie(_) | Persistence::Tls);
    if premium && !input.cluster.capabilities.premium {
        return Err(invalid(
            PERSISTENCE,
            format!(
                "app-cookie and tls persistence need the PREMIUM load-balancer feature set, which edge gateway {} lacks; client-ip and http-cookie work on any gateway",
                input.cluster.gateway
            ),
        ));
    }
    for port in ports {
        check_profile(&persistence, port)?;
    }
    Ok(persistence)
}

fn parse(value: &str) -> Result<Persistence, String> {
    let cookie = |name: &str| {
        let name = name.trim();
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || name.len() > 64 || !name.chars().all(token) {
            Err(format!(
                "cookie name {name:?} must be 1 to 64 letters, digits or !#$%&'*+-.^_`|~"
            ))
        } else {
            Ok(name.to_string())
        }
    };
    match value.split_once(':') {
        Some(("http-cookie", name)) => cookie(name).map(Persistence::HttpCookie),
        Some(("app-cookie", name)) => cookie(name).map(Persistence::AppCookie),
        None if value == "none" => Ok(Persistence::None),
        None if value == "client-ip" => Ok(Persistence::ClientIp),
        None if value == "tls" => Ok(Persistence::Tls),
        _ => Err(format!(
            "{value:?} is not a persistence: use none, client-ip, tls, http-cookie:<cookie name> or app-cookie:<cookie name>"
        )),
    }
}

/// Cookies need HTTP, a TLS session needs TLS terminated at the load balancer.
fn check_profile(persistence: &Persistence, port: &PortDecision) -> Result<(), DecisionError> {
    let http = matches!(port.profile, AppProfile::Http | AppProfile::Https);
    let tls = matches!(port.profile, AppProfile::Https | AppProfile::L4Tls);
    let (fits, needs) = match persistence {
        Persistence::HttpCookie(_) | Persistence::AppCookie(_) => (
            http,
            "HTTP (appProtocol http or https, or a vcloud-avi-ssl-ports port)",
        ),
        Persistence::Tls => (
            tls,
            "TLS terminated at the load balancer (a vcloud-avi-ssl-ports port)",
        ),
        Persistence::None | Persistence::ClientIp => (true, ""),
    };
    if fits {
        Ok(())
    } else {
        Err(invalid(
            PERSISTENCE,
            format!(
                "port {} needs {needs} for this persistence; use client-ip, which works on every port",
                port.service_port
            ),
        ))
    }
}

//! How the Service is exposed beyond its address (contract 0.4.0): the
//! mode clients inside the cluster use, a hostname in the status, and the
//! Nodes that serve it.

use crate::read::{get, invalid, shown};
use crate::vcd::lb_policy::types::{
    AppProfile, DecisionError, IpMode, NodeRequirement, Persistence, PortDecision, PortTraffic,
    SelectorOperator, Service,
};

/// `VIP` or `Proxy`: how clients inside the cluster reach the address.
pub const IP_MODE: &str = "vcd-ccm.io/ip-mode";
/// A DNS name for the Service's status, beside its address.
pub const HOSTNAME: &str = "vcd-ccm.io/hostname";
/// A label selector (`role=ingress,zone in (a,b)`): the Nodes that serve the Service.
pub const NODE_SELECTOR: &str = "vcd-ccm.io/node-selector";

/// The contract's caps.
const MAX_REQUIREMENTS: usize = 16;
const MAX_VALUES: usize = 16;
const MAX_HOSTNAME: usize = 253;

/// The mode asked for; `VIP` only where the load balancer adds nothing.
pub fn ip_mode(
    service: &Service,
    ports: &[PortDecision],
    traffic: &[PortTraffic],
    preserve_client_ip: bool,
) -> Result<IpMode, DecisionError> {
    let Some(value) = get(service, IP_MODE)
        .map(str::trim)
        .filter(|v| !v.is_empty())
    else {
        return Ok(IpMode::Proxy);
    };
    match value.to_ascii_lowercase().as_str() {
        "proxy" => Ok(IpMode::Proxy),
        "vip" => {
            let refuse = |why: String| {
                Err(invalid(
                    IP_MODE,
                    format!(
                        "VIP sends clients inside the cluster straight to the pods, past the load balancer, so it needs a load balancer that adds nothing: {why}; remove the annotation or that setting"
                    ),
                ))
            };
            if let Some(p) = ports
                .iter()
                .find(|p| !matches!(p.profile, AppProfile::L4Tcp | AppProfile::L4Udp))
            {
                return refuse(format!(
                    "port {} terminates TLS or HTTP at the load balancer",
                    p.service_port
                ));
            }
            if preserve_client_ip {
                return refuse("the Service preserves client addresses".into());
            }
            if let Some(t) = traffic
                .iter()
                .find(|t| !matches!(t.persistence, Persistence::None))
            {
                return refuse(format!("port {} keeps session persistence", t.service_port));
            }
            Ok(IpMode::Vip)
        }
        _ => Err(invalid(
            IP_MODE,
            format!("{value:?} is not an address mode: use \"VIP\" or \"Proxy\""),
        )),
    }
}

/// The hostname asked for, a lower-case DNS name.
pub fn hostname(service: &Service) -> Result<Option<String>, DecisionError> {
    let Some(value) = get(service, HOSTNAME)
        .map(str::trim)
        .filter(|v| !v.is_empty())
    else {
        return Ok(None);
    };
    let name = value.trim_end_matches('.');
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.len() > MAX_HOSTNAME || !name.split('.').all(label_ok) {
        return Err(invalid(
            HOSTNAME,
            format!(
                "{} is not a DNS name: use lower-case labels of letters, digits and '-', separated by dots, at most {MAX_HOSTNAME} characters (such as \"web.example.com\")",
                shown(value)
            ),
        ));
    }
    Ok(Some(name.to_string()))
}

/// The Node selector asked for, in Kubernetes' label-selector syntax.
pub fn node_selector(service: &Service) -> Result<Vec<NodeRequirement>, DecisionError> {
    let Some(value) = get(service, NODE_SELECTOR).filter(|v| !v.trim().is_empty()) else {
        return Ok(Vec::new());
    };
    let mut requirements = Vec::new();
    for term in split_terms(value) {
        let term = term.trim();
        let requirement = parse_term(term).map_err(|why| {
            invalid(
                NODE_SELECTOR,
                format!(
                    "{}: {why}; write requirements such as \"role=ingress\", \"zone in (a,b)\", \"tier!=db\", \"gpu\" or \"!spot\", separated by commas",
                    shown(term)
                ),
            )
        })?;
        requirements.push(requirement);
    }
    if requirements.len() > MAX_REQUIREMENTS {
        return Err(invalid(
            NODE_SELECTOR,
            format!(
                "{} requirements; at most {MAX_REQUIREMENTS} are allowed",
                requirements.len()
            ),
        ));
    }
    Ok(requirements)
}

/// The comma-separated terms, commas inside `( )` kept.
fn split_terms(text: &str) -> Vec<&str> {
    let (mut terms, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                terms.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&text[start..]);
    terms
}

fn parse_term(term: &str) -> Result<NodeRequirement, String> {
    let requirement = |key: &str, operator, values: Vec<String>| {
        check_key(key)?;
        if values.len() > MAX_VALUES {
            return Err(format!("at most {MAX_VALUES} values"));
        }
        for value in &values {
            check_value(value)?;
        }
        let mut values = values;
        values.sort();
        values.dedup();
        Ok(NodeRequirement {
            key: key.to_string(),
            operator,
            values,
        })
    };
    if let Some(key) = term.strip_prefix('!') {
        return requirement(key.trim(), SelectorOperator::DoesNotExist, Vec::new());
    }
    for (separator, operator) in [
        ("!=", SelectorOperator::NotIn),
        ("==", SelectorOperator::In),
        ("=", SelectorOperator::In),
    ] {
        if let Some((key, value)) = term.split_once(separator) {
            return requirement(key.trim(), operator, vec![value.trim().to_string()]);
        }
    }
    for (word, operator) in [
        (" notin ", SelectorOperator::NotIn),
        (" in ", SelectorOperator::In),
    ] {
        if let Some((key, rest)) = term.split_once(word) {
            let list = rest
                .trim()
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .ok_or("the values of in and notin go in parentheses")?;
            let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
            if values.iter().all(String::is_empty) {
                return Err("in and notin need at least one value".into());
            }
            return requirement(key.trim(), operator, values);
        }
    }
    requirement(term, SelectorOperator::Exists, Vec::new())
}

/// Kubernetes' label-name rule: 1 to 63 of letters, digits, `-`, `_`, `.`,
/// starting and ending with a letter or digit.
fn check_name(name: &str, what: &str) -> Result<(), String> {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let ok = (1..=63).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && edge(name.chars().next())
        && edge(name.chars().last());
    match ok {
        true => Ok(()),
        false => Err(format!(
            "{what} {name:?} is not a label name (1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit)"
        )),
    }
}

fn check_key(key: &str) -> Result<(), String> {
    match key.rsplit_once('/') {
        None => check_name(key, "key"),
        Some((prefix, name)) => {
            let label_ok = |l: &str| {
                (1..=63).contains(&l.len())
                    && l.bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            };
            if prefix.len() > 253 || !prefix.split('.').all(label_ok) {
                return Err(format!("key prefix {prefix:?} is not a DNS subdomain"));
            }
            check_name(name, "key")
        }
    }
}

fn check_value(value: &str) -> Result<(), String> {
    match value.is_empty() {
        true => Ok(()),
        false => check_name(value, "value"),
    }
}

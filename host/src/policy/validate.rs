//! The host never trusts a decision: these are the contract's rules, checked
//! against the input the policy was given. Checks that need VCD's current state
//! (is the address free?) belong to the load-balancer reconciler.

mod exposure;
mod http;
mod monitor;
mod traffic;

use std::collections::HashMap;

use super::model::{
    AddressChoice, AppProfile, Decision, DecisionInput, HealthMonitor, IpAddress, IpFamily,
    PortDecision, Protocol,
};

const MAX_WARNINGS: usize = 16;
const MAX_WARNING_BYTES: usize = 512;

/// Every rule the decision breaks, joined into one message; `Ok` when none.
pub fn check(input: &DecisionInput, decision: &Decision) -> Result<(), String> {
    let mut problems = Vec::new();
    check_address(input, &decision.address, &mut problems);
    check_coverage(input, &decision.ports, &mut problems);
    for port in &decision.ports {
        check_port(input, port, &mut problems);
        monitor::check(input, port, &mut problems);
    }
    traffic::check(input, decision, &mut problems);
    exposure::check(input, decision, &mut problems);
    if let Some(group) = &decision.service_engine_group {
        check_engine_group(input, group, &mut problems);
    }
    if decision.preserve_client_ip && !input.cluster.capabilities.transparent_mode {
        problems.push(no_transparent_mode(input));
    }
    // Transparent mode needs the pools' members as an IP set, which has no
    // member to disable.
    if decision.preserve_client_ip && decision.traffic.iter().any(|t| t.drain_seconds > 0) {
        problems.push(
            "preserve-client-ip and a drain period cannot go together: NSX ALB's transparent mode takes pool members from an IP set, and a drain disables members one by one in a member list; keep one of them".to_string(),
        );
    }
    if decision.warnings.len() > MAX_WARNINGS {
        problems.push(format!(
            "{} warnings (at most {MAX_WARNINGS})",
            decision.warnings.len()
        ));
    }
    if decision
        .warnings
        .iter()
        .any(|w| w.len() > MAX_WARNING_BYTES)
    {
        problems.push(format!("a warning longer than {MAX_WARNING_BYTES} bytes"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// The group must be one the gateway has; whether it has room depends on
/// what the Service runs there now, which the load balancer checks.
fn check_engine_group(input: &DecisionInput, group: &str, problems: &mut Vec<String>) {
    let groups = &input.service_engine_groups;
    if !groups.iter().any(|g| g.name == group) {
        let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
        problems.push(format!(
            "service-engine-group {group:?} is not assigned to edge gateway {}; assigned: {}",
            input.cluster.gateway,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
}

/// The first VCD API version whose virtual services have `transparentModeEnabled` (VCD 10.4.1).
const TRANSPARENT_MODE_API: (u32, u32) = (37, 1);

/// Why `preserve-client-ip` cannot be honoured here, and what would make it
/// possible. The capability needs both a recent enough API and the
/// provider's gateway setting; the API version, when it parses, says which
/// of the two is missing.
fn no_transparent_mode(input: &DecisionInput) -> String {
    let cluster = &input.cluster;
    let (gateway, api) = (&cluster.gateway, &cluster.vcd_api_version);
    let (major, minor) = TRANSPARENT_MODE_API;
    let lacking = match api_version(api) {
        Some(version) if version < TRANSPARENT_MODE_API => format!(
            "VCD API {api} has no transparent mode: it needs VCD 10.4.1 or later (API {major}.{minor}+) and transparent mode enabled in edge gateway {gateway}'s load-balancer settings"
        ),
        Some(_) => format!(
            "edge gateway {gateway} does not have transparent mode enabled: the provider enables it in the gateway's load-balancer settings (transparentModeEnabled, VCD 10.4.1+ / API {major}.{minor}+)"
        ),
        None => format!(
            "edge gateway {gateway} does not offer transparent mode: it needs VCD 10.4.1 or later (API {major}.{minor}+) and transparent mode enabled in the gateway's load-balancer settings"
        ),
    };
    format!("preserve-client-ip needs NSX ALB transparent mode, but {lacking}")
}

/// `37.2` as (37, 2); `None` for anything else. Parsed here rather than with
/// the VCD client's `ApiVersion`: the policy host does not depend on the client.
fn api_version(text: &str) -> Option<(u32, u32)> {
    let (major, minor) = text.trim().split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

fn family(address: IpAddress) -> IpFamily {
    match address {
        IpAddress::Ipv4(_) => IpFamily::Ipv4,
        IpAddress::Ipv6(_) => IpFamily::Ipv6,
    }
}

fn check_address(input: &DecisionInput, address: &AddressChoice, problems: &mut Vec<String>) {
    match address {
        AddressChoice::Specific(ip) => {
            if !input
                .pools
                .iter()
                .any(|pool| pool.ranges.iter().any(|range| range.contains(*ip)))
            {
                problems.push(format!("address {ip} lies in none of the offered pools"));
            }
            let families = &input.service.ip_families;
            if !families.is_empty() && !families.contains(&family(*ip)) {
                problems.push(format!("address {ip} is not of the Service's ipFamilies"));
            }
        }
        AddressChoice::FromPool(name) => {
            match input.pools.iter().find(|pool| &pool.name == name) {
                None => problems.push(format!("pool {name:?} is not one of the offered pools")),
                Some(pool) => {
                    let families = &input.service.ip_families;
                    let offered = pool.ranges.first().map(|range| family(range.first));
                    if let Some(offered) =
                        offered.filter(|f| !families.is_empty() && !families.contains(f))
                    {
                        problems.push(format!("pool {name:?} offers {offered} addresses, not of the Service's ipFamilies"));
                    }
                }
            }
        }
        AddressChoice::KeepCurrent => {
            let has_current = matches!(
                input.current.as_ref().map(|c| &c.address),
                Some(AddressChoice::Specific(_))
            );
            if !has_current {
                problems.push("keep-current, but the Service has no address yet".into());
            }
        }
    }
}

/// Each Service port exactly once, nothing else, and no listen port twice.
fn check_coverage(input: &DecisionInput, ports: &[PortDecision], problems: &mut Vec<String>) {
    let mut seen: HashMap<(u16, Protocol), usize> = HashMap::new();
    let mut listening: HashMap<(u16, Protocol), usize> = HashMap::new();
    for port in ports {
        *seen.entry((port.service_port, port.protocol)).or_default() += 1;
        *listening
            .entry((port.listen_port, port.protocol))
            .or_default() += 1;
    }
    for service_port in &input.service.ports {
        match seen.remove(&(service_port.port, service_port.protocol)) {
            None => problems.push(format!(
                "Service port {}/{} has no entry",
                service_port.port, service_port.protocol
            )),
            Some(1) => {}
            Some(n) => problems.push(format!(
                "Service port {}/{} is covered {n} times",
                service_port.port, service_port.protocol
            )),
        }
    }
    let mut strays: Vec<_> = seen.into_keys().collect();
    strays.sort();
    for (port, protocol) in strays {
        problems.push(format!(
            "entry for {port}/{protocol} matches no Service port"
        ));
    }
    let mut doubles: Vec<_> = listening
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(key, _)| key)
        .collect();
    doubles.sort();
    for (port, protocol) in doubles {
        problems.push(format!(
            "listen port {port}/{protocol} is used by more than one entry"
        ));
    }
}

fn check_port(input: &DecisionInput, port: &PortDecision, problems: &mut Vec<String>) {
    let at = format!("port {}/{}", port.service_port, port.protocol);
    let fits = match port.protocol {
        Protocol::Tcp => !matches!(port.profile, AppProfile::L4Udp),
        Protocol::Udp => matches!(port.profile, AppProfile::L4Udp),
        Protocol::Sctp => false,
    };
    if !fits {
        problems.push(format!(
            "{at}: profile {} cannot serve {}",
            port.profile, port.protocol
        ));
    }
    if port.listen_port == 0 {
        problems.push(format!("{at}: listen port 0"));
    }
    if !input.profiles.contains(&port.profile) {
        problems.push(format!(
            "{at}: the gateway does not offer profile {}",
            port.profile
        ));
    }
    let terminates_tls = matches!(port.profile, AppProfile::L4Tls | AppProfile::Https);
    match (&port.certificate, terminates_tls) {
        (None, true) => problems.push(format!(
            "{at}: profile {} needs a certificate",
            port.profile
        )),
        (Some(alias), false) => problems.push(format!(
            "{at}: profile {} takes no certificate, got {alias:?}",
            port.profile
        )),
        (Some(alias), true) if !input.certificates.iter().any(|c| &c.alias == alias) => {
            problems.push(format!("{at}: certificate {alias:?} is not in the library"));
        }
        _ => {}
    }
    let monitor_fits = match port.protocol {
        Protocol::Udp => matches!(
            port.health_monitor,
            HealthMonitor::None | HealthMonitor::Udp | HealthMonitor::Ping
        ),
        _ => !matches!(port.health_monitor, HealthMonitor::Udp),
    };
    if !monitor_fits {
        problems.push(format!(
            "{at}: a {} monitor cannot probe {}",
            port.health_monitor, port.protocol
        ));
    }
    if !port.algorithm.is_basic() && !input.cluster.capabilities.premium {
        problems.push(format!(
            "{at}: algorithm {} needs the PREMIUM feature set",
            port.algorithm
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(api: &str) -> String {
        let mut input = DecisionInput::default();
        input.cluster.gateway = "edge-1".into();
        input.cluster.vcd_api_version = api.into();
        let decision = Decision {
            preserve_client_ip: true,
            ..Decision::of(AddressChoice::KeepCurrent, Vec::new(), Vec::new())
        };
        let problems = check(&input, &decision).unwrap_err();
        problems
            .split("; ")
            .find(|p| p.starts_with("preserve-client-ip"))
            .expect("preserve-client-ip is refused")
            .to_string()
    }

    #[test]
    fn a_drain_and_preserved_client_addresses_are_refused_together() {
        let mut input = DecisionInput::default();
        input.cluster.capabilities.transparent_mode = true;
        let decision = Decision {
            preserve_client_ip: true,
            traffic: vec![crate::policy::model::PortTraffic {
                service_port: 80,
                protocol: Protocol::Tcp,
                persistence: Default::default(),
                http: Default::default(),
                drain_seconds: 30,
            }],
            ..Decision::of(AddressChoice::KeepCurrent, Vec::new(), Vec::new())
        };
        let refusal = check(&input, &decision).unwrap_err();
        assert!(
            refusal.contains("preserve-client-ip and a drain period cannot go together"),
            "{refusal}"
        );
    }

    #[test]
    fn preserve_client_ip_refusal_names_what_is_missing() {
        assert_eq!(
            refusal("36.3"),
            "preserve-client-ip needs NSX ALB transparent mode, but VCD API 36.3 has no transparent mode: it needs VCD 10.4.1 or later (API 37.1+) and transparent mode enabled in edge gateway edge-1's load-balancer settings"
        );
        assert_eq!(
            refusal("37.10"),
            "preserve-client-ip needs NSX ALB transparent mode, but edge gateway edge-1 does not have transparent mode enabled: the provider enables it in the gateway's load-balancer settings (transparentModeEnabled, VCD 10.4.1+ / API 37.1+)"
        );
        assert!(refusal("").contains("does not offer transparent mode: it needs VCD 10.4.1"));
    }
}

//! The contract's rules for how a Service is exposed (0.4.0): `vip` only
//! where the load balancer adds nothing to the traffic, a hostname that is
//! a DNS name, retention only where addresses can be kept, and a node
//! selector within its bounds.

use crate::names::{is_dns_subdomain, label_key_problem, label_value_problem};
use crate::policy::model::{
    AppProfile, Decision, DecisionInput, IpMode, NodeRequirement, Persistence, SelectorOperator,
};
use crate::text::sanitize;

/// At most this many requirements in a node selector, and values in one.
pub const MAX_REQUIREMENTS: usize = 16;
const MAX_VALUES: usize = 16;

/// Every rule the decision's exposure breaks, added to `problems`.
pub fn check(input: &DecisionInput, decision: &Decision, problems: &mut Vec<String>) {
    if decision.ip_mode == IpMode::Vip
        && let Some(why) = why_not_vip(decision)
    {
        problems.push(format!(
            "ip-mode vip sends clients inside the cluster straight to the pods, past the load balancer, so the load balancer must add nothing to the traffic, but {why}; ask for proxy"
        ));
    }
    if let Some(name) = &decision.hostname
        && !is_dns_subdomain(name)
    {
        problems.push(format!(
            "hostname {:?} is not a DNS name (at most 253 bytes of lower-case labels of letters, digits and '-')",
            sanitize(name, 80)
        ));
    }
    if decision.retain_address && !input.cluster.capabilities.retained_addresses {
        problems.push(
            "retain-address needs capabilities.retained-addresses, which is false: only an IP Space allocation can outlive its Service, and this gateway's addresses come from IP blocks; leave it false".to_string(),
        );
    }
    if decision.node_selector.len() > MAX_REQUIREMENTS {
        problems.push(format!(
            "node-selector has {} requirements (at most {MAX_REQUIREMENTS})",
            decision.node_selector.len()
        ));
    }
    for requirement in &decision.node_selector {
        if let Some(problem) = requirement_problem(requirement) {
            problems.push(format!("node-selector: {problem}"));
        }
    }
}

/// Why the load balancer adds something to the Service's traffic, if it does.
fn why_not_vip(decision: &Decision) -> Option<String> {
    if let Some(port) = decision
        .ports
        .iter()
        .find(|p| !matches!(p.profile, AppProfile::L4Tcp | AppProfile::L4Udp))
    {
        return Some(format!(
            "port {} has profile {}",
            port.service_port, port.profile
        ));
    }
    if decision.preserve_client_ip {
        return Some("preserve-client-ip is set".into());
    }
    decision.traffic.iter().find_map(|t| {
        if t.persistence != Persistence::None {
            Some(format!(
                "port {} has persistence {}",
                t.service_port,
                t.persistence.wit_name()
            ))
        } else if !t.http.is_empty() {
            Some(format!("port {} has HTTP rules", t.service_port))
        } else {
            None
        }
    })
}

fn requirement_problem(requirement: &NodeRequirement) -> Option<String> {
    if let Some(problem) = label_key_problem(&requirement.key) {
        return Some(format!("key: {problem}"));
    }
    let key = &requirement.key;
    let values = requirement.values.len();
    match requirement.operator {
        SelectorOperator::In | SelectorOperator::NotIn if !(1..=MAX_VALUES).contains(&values) => {
            Some(format!(
                "{key}: {} takes 1 to {MAX_VALUES} values, not {values}",
                requirement.operator
            ))
        }
        SelectorOperator::Exists | SelectorOperator::DoesNotExist if values > 0 => {
            Some(format!("{key}: {} takes no values", requirement.operator))
        }
        _ => requirement
            .values
            .iter()
            .find_map(|v| label_value_problem(v))
            .map(|problem| format!("{key}: value {problem}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::model::{
        AddressChoice, HealthMonitor, PoolAlgorithm, PortDecision, PortTraffic, Protocol,
    };

    fn decision(profile: AppProfile) -> Decision {
        let port = PortDecision {
            service_port: 80,
            protocol: Protocol::Tcp,
            listen_port: 80,
            profile,
            certificate: None,
            health_monitor: HealthMonitor::Tcp,
            algorithm: PoolAlgorithm::RoundRobin,
            monitor: None,
        };
        Decision::of(AddressChoice::KeepCurrent, vec![port], Vec::new())
    }

    fn problems(decision: &Decision) -> Vec<String> {
        let mut problems = Vec::new();
        check(&DecisionInput::default(), decision, &mut problems);
        problems
    }

    fn requirement(key: &str, operator: SelectorOperator, values: &[&str]) -> NodeRequirement {
        NodeRequirement {
            key: key.into(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn vip_is_granted_only_where_the_load_balancer_adds_nothing() {
        let plain = Decision {
            ip_mode: IpMode::Vip,
            ..decision(AppProfile::L4Tcp)
        };
        assert!(problems(&plain).is_empty());
        let http = Decision {
            ip_mode: IpMode::Vip,
            ..decision(AppProfile::Http)
        };
        assert_eq!(
            problems(&http),
            [
                "ip-mode vip sends clients inside the cluster straight to the pods, past the load balancer, so the load balancer must add nothing to the traffic, but port 80 has profile http; ask for proxy"
            ]
        );
        let preserving = Decision {
            preserve_client_ip: true,
            ..plain.clone()
        };
        assert!(problems(&preserving)[0].contains("preserve-client-ip is set"));
        let sticky = Decision {
            traffic: vec![PortTraffic {
                service_port: 80,
                protocol: Protocol::Tcp,
                persistence: Persistence::ClientIp,
                http: Default::default(),
                drain_seconds: 0,
            }],
            ..plain
        };
        assert!(problems(&sticky)[0].contains("port 80 has persistence client-ip"));
    }

    #[test]
    fn hostnames_retention_and_selectors_are_bounded() {
        let named = |name: &str| Decision {
            hostname: Some(name.into()),
            ..decision(AppProfile::L4Tcp)
        };
        assert!(problems(&named("web.example.com")).is_empty());
        assert!(problems(&named("Web.example.com"))[0].contains("is not a DNS name"));
        let retained = Decision {
            retain_address: true,
            ..decision(AppProfile::L4Tcp)
        };
        assert!(
            problems(&retained)[0]
                .starts_with("retain-address needs capabilities.retained-addresses")
        );
        let selecting = |selector: Vec<NodeRequirement>| Decision {
            node_selector: selector,
            ..decision(AppProfile::L4Tcp)
        };
        let good = vec![
            requirement(
                "node-role.kubernetes.io/ingress",
                SelectorOperator::Exists,
                &[],
            ),
            requirement("zone", SelectorOperator::In, &["a", "b"]),
        ];
        assert!(problems(&selecting(good)).is_empty());
        assert_eq!(
            problems(&selecting(vec![
                requirement("zone", SelectorOperator::In, &[]),
                requirement("gpu", SelectorOperator::Exists, &["yes"]),
                requirement("-bad", SelectorOperator::Exists, &[]),
                requirement("tier", SelectorOperator::NotIn, &["a b"]),
            ])),
            [
                "node-selector: zone: in takes 1 to 16 values, not 0",
                "node-selector: gpu: exists takes no values",
                "node-selector: key: \"-bad\" is not 1 to 63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
                "node-selector: tier: value \"a b\" is not 1 to 63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
            ]
        );
        let many = (0..17)
            .map(|i| requirement(&format!("k{i}"), SelectorOperator::Exists, &[]))
            .collect();
        assert_eq!(
            problems(&selecting(many)),
            ["node-selector has 17 requirements (at most 16)"]
        );
    }
}

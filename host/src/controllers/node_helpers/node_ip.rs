//! The kubelet's `alpha.kubernetes.io/provided-node-ip` annotation (its
//! `--node-ip`): parsing it, and choosing and ordering the cloud's addresses
//! by it, as k8s.io/cloud-provider's `GetNodeAddressesFromNodeIP`.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};

use k8s_openapi::api::core::v1::NodeAddress;

pub const PROVIDED_NODE_IP_ANNOTATION: &str = "alpha.kubernetes.io/provided-node-ip";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeIpError {
    #[error("failed to parse node IP \"{value}\": {reason}")]
    Parse {
        value: String,
        #[source]
        reason: NodeIpParseError,
    },
    #[error("failed to get node address from cloud provider that matches ip: {0}")]
    NoMatch(IpAddr),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodeIpParseError {
    #[error("could not parse \"{0}\"")]
    NotAnIp(String),
    #[error("must contain either a single IP or a dual-stack pair of IPs")]
    NotSingleOrDualStack,
    #[error("dual-stack node IP cannot include '0.0.0.0' or '::'")]
    UnspecifiedInDualStack,
}

/// Go's `netutils.ParseIPSloppy`: IPv4 octets may carry leading zeros, and an
/// IPv4-mapped IPv6 address is the IPv4 address.
pub fn parse_ip_sloppy(text: &str) -> Option<IpAddr> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(ip.to_canonical());
    }
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        let part = parts.next()?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    match parts.next() {
        Some(_) => None,
        None => Some(IpAddr::V4(Ipv4Addr::from(octets))),
    }
}

/// One IP, or a dual-stack pair "v4,v6" in either order. Unlike the kubelet
/// flag, nothing is trimmed and an empty value is an error.
pub fn parse_provided_node_ip(value: &str) -> Result<Vec<IpAddr>, NodeIpParseError> {
    let ips = value
        .split(',')
        .map(|part| parse_ip_sloppy(part).ok_or_else(|| NodeIpParseError::NotAnIp(part.into())))
        .collect::<Result<Vec<_>, _>>()?;
    match ips.as_slice() {
        [_] => Ok(ips),
        [first, second] if first.is_ipv6() != second.is_ipv6() => {
            if first.is_unspecified() || second.is_unspecified() {
                Err(NodeIpParseError::UnspecifiedInDualStack)
            } else {
                Ok(ips)
            }
        }
        _ => Err(NodeIpParseError::NotSingleOrDualStack),
    }
}

/// The cloud's addresses as the provided node IP wants them: first every
/// address equal to a provided IP, in annotation order; then every address
/// of a type no provided IP matched. Other addresses of a matched type are
/// dropped. Each provided IP must match some cloud address.
pub fn addresses_for_node_ip(
    provided: &str,
    cloud: &[NodeAddress],
) -> Result<Vec<NodeAddress>, NodeIpError> {
    let node_ips = parse_provided_node_ip(provided).map_err(|reason| NodeIpError::Parse {
        value: provided.to_string(),
        reason,
    })?;
    let mut chosen = Vec::new();
    let mut matched_types = HashSet::new();
    for node_ip in node_ips {
        let matching: Vec<&NodeAddress> = cloud
            .iter()
            .filter(|address| parse_ip_sloppy(&address.address) == Some(node_ip))
            .collect();
        if matching.is_empty() {
            return Err(NodeIpError::NoMatch(node_ip));
        }
        for address in matching {
            matched_types.insert(address.type_.as_str());
            chosen.push(address.clone());
        }
    }
    chosen.extend(
        cloud
            .iter()
            .filter(|address| !matched_types.contains(address.type_.as_str()))
            .cloned(),
    );
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "testKubeletHostname";

    fn addresses(list: &[(&str, &str)]) -> Vec<NodeAddress> {
        list.iter()
            .map(|(type_, address)| NodeAddress {
                type_: type_.to_string(),
                address: address.to_string(),
            })
            .collect()
    }

    #[test]
    fn cloud_addresses_are_chosen_and_ordered_by_the_node_ip() {
        type Case<'a> = (
            &'a str,
            &'a str,
            Vec<(&'a str, &'a str)>,
            Option<Vec<(&'a str, &'a str)>>,
        );
        let cases: Vec<Case> = vec![
            (
                "a single InternalIP",
                "10.1.1.1",
                vec![("InternalIP", "10.1.1.1"), ("Hostname", HOST)],
                Some(vec![("InternalIP", "10.1.1.1"), ("Hostname", HOST)]),
            ),
            (
                "node IP is external",
                "55.55.55.55",
                vec![
                    ("InternalIP", "10.1.1.1"),
                    ("ExternalIP", "55.55.55.55"),
                    ("Hostname", HOST),
                ],
                Some(vec![
                    ("ExternalIP", "55.55.55.55"),
                    ("InternalIP", "10.1.1.1"),
                    ("Hostname", HOST),
                ]),
            ),
            (
                "internal and external IP are the same",
                "55.55.55.55",
                vec![
                    ("InternalIP", "44.44.44.44"),
                    ("ExternalIP", "44.44.44.44"),
                    ("InternalIP", "55.55.55.55"),
                    ("ExternalIP", "55.55.55.55"),
                    ("Hostname", HOST),
                ],
                Some(vec![
                    ("InternalIP", "55.55.55.55"),
                    ("ExternalIP", "55.55.55.55"),
                    ("Hostname", HOST),
                ]),
            ),
            (
                "internal and external IPs and DNS names",
                "10.1.1.1",
                vec![
                    ("InternalIP", "10.1.1.1"),
                    ("ExternalIP", "55.55.55.55"),
                    ("InternalDNS", "ip-10-1-1-1.internal"),
                    ("ExternalDNS", "ec2-55-55-55-55.example.com"),
                    ("Hostname", HOST),
                ],
                Some(vec![
                    ("InternalIP", "10.1.1.1"),
                    ("ExternalIP", "55.55.55.55"),
                    ("InternalDNS", "ip-10-1-1-1.internal"),
                    ("ExternalDNS", "ec2-55-55-55-55.example.com"),
                    ("Hostname", HOST),
                ]),
            ),
            (
                "other internal IPs are dropped",
                "10.2.2.2",
                vec![
                    ("InternalIP", "10.1.1.1"),
                    ("InternalIP", "10.2.2.2"),
                    ("InternalIP", "10.3.3.3"),
                    ("ExternalIP", "55.55.55.55"),
                    ("Hostname", HOST),
                ],
                Some(vec![
                    ("InternalIP", "10.2.2.2"),
                    ("ExternalIP", "55.55.55.55"),
                    ("Hostname", HOST),
                ]),
            ),
            (
                "no cloud address matches",
                "10.2.2.2",
                vec![
                    ("InternalIP", "10.1.1.1"),
                    ("ExternalIP", "55.55.55.55"),
                    ("Hostname", HOST),
                ],
                None,
            ),
            (
                "IPv6 written differently",
                "2600:1f14:1d4:d101::ba3d",
                vec![
                    ("InternalIP", "10.1.1.1"),
                    ("InternalIP", "2600:1f14:1d4:d101:0:0:0:ba3d"),
                    ("Hostname", HOST),
                ],
                Some(vec![
                    ("InternalIP", "2600:1f14:1d4:d101:0:0:0:ba3d"),
                    ("Hostname", HOST),
                ]),
            ),
            (
                "dual-stack node IPs, IPv6 first",
                "2600:1f14:1d4:d101::ba3d,10.1.1.1",
                vec![
                    ("InternalIP", "10.1.1.1"),
                    ("InternalIP", "10.1.1.2"),
                    ("InternalIP", "2600:1f14:1d4:d101::ba3d"),
                    ("InternalIP", "2001:db8::2"),
                    ("Hostname", HOST),
                ],
                Some(vec![
                    ("InternalIP", "2600:1f14:1d4:d101::ba3d"),
                    ("InternalIP", "10.1.1.1"),
                    ("Hostname", HOST),
                ]),
            ),
            (
                "dual-stack node IPs, one not in the cloud",
                "10.1.1.1,2001:db8::9",
                vec![("InternalIP", "10.1.1.1"), ("InternalIP", "2001:db8::2")],
                None,
            ),
            (
                "leading zeros and mapped IPv4 match",
                "010.001.001.001",
                vec![("InternalIP", "::ffff:10.1.1.1"), ("Hostname", HOST)],
                Some(vec![("InternalIP", "::ffff:10.1.1.1"), ("Hostname", HOST)]),
            ),
            (
                "a hostname never matches",
                "10.1.1.1",
                vec![("Hostname", "10.1.1.1.example")],
                None,
            ),
            ("no cloud addresses", "10.1.1.1", vec![], None),
        ];
        for (name, node_ip, cloud, expected) in cases {
            let got = addresses_for_node_ip(node_ip, &addresses(&cloud));
            match expected {
                Some(expected) => assert_eq!(got, Ok(addresses(&expected)), "{name}"),
                None => assert!(
                    matches!(got, Err(NodeIpError::NoMatch(_))),
                    "{name}: {got:?}"
                ),
            }
        }
    }

    #[test]
    fn the_annotation_is_one_ip_or_a_dual_stack_pair() {
        let v4: IpAddr = "10.0.0.1".parse().unwrap();
        let v6: IpAddr = "fd00::1".parse().unwrap();
        let cases: Vec<(&str, Result<Vec<IpAddr>, NodeIpParseError>)> = vec![
            ("10.0.0.1", Ok(vec![v4])),
            ("fd00::1", Ok(vec![v6])),
            ("10.0.0.1,fd00::1", Ok(vec![v4, v6])),
            ("fd00::1,10.0.0.1", Ok(vec![v6, v4])),
            ("0.0.0.0", Ok(vec!["0.0.0.0".parse().unwrap()])),
            ("", Err(NodeIpParseError::NotAnIp(String::new()))),
            (
                "invalid-ip",
                Err(NodeIpParseError::NotAnIp("invalid-ip".into())),
            ),
            (
                " 10.0.0.1",
                Err(NodeIpParseError::NotAnIp(" 10.0.0.1".into())),
            ),
            ("10.0.0.1,", Err(NodeIpParseError::NotAnIp(String::new()))),
            (
                "10.0.0.1,10.0.0.2",
                Err(NodeIpParseError::NotSingleOrDualStack),
            ),
            (
                "fd00::1,fd00::2",
                Err(NodeIpParseError::NotSingleOrDualStack),
            ),
            (
                "10.0.0.1,fd00::1,10.0.0.2",
                Err(NodeIpParseError::NotSingleOrDualStack),
            ),
            (
                "0.0.0.0,fd00::1",
                Err(NodeIpParseError::UnspecifiedInDualStack),
            ),
            ("10.0.0.1,::", Err(NodeIpParseError::UnspecifiedInDualStack)),
        ];
        for (value, expected) in cases {
            assert_eq!(parse_provided_node_ip(value), expected, "{value:?}");
        }
    }

    #[test]
    fn an_unparsable_annotation_names_the_value() {
        let error = addresses_for_node_ip("invalid-ip", &addresses(&[("InternalIP", "10.0.0.1")]))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "failed to parse node IP \"invalid-ip\": could not parse \"invalid-ip\""
        );
        let error = addresses_for_node_ip("10.9.9.9", &[]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "failed to get node address from cloud provider that matches ip: 10.9.9.9"
        );
    }

    #[test]
    fn sloppy_parsing_accepts_what_go_accepts() {
        let cases = [
            ("10.0.0.1", Some("10.0.0.1")),
            ("010.000.000.001", Some("10.0.0.1")),
            ("::ffff:192.0.2.1", Some("192.0.2.1")),
            ("2001:db8::1", Some("2001:db8::1")),
            ("256.0.0.1", None),
            ("10.0.0", None),
            ("10.0.0.1.2", None),
            ("10.0.0.+1", None),
            ("worker-0", None),
            ("", None),
        ];
        for (text, expected) in cases {
            let expected = expected.map(|ip| ip.parse::<IpAddr>().unwrap());
            assert_eq!(parse_ip_sloppy(text), expected, "{text:?}");
        }
    }
}

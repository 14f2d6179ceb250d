//! Which `status.addresses` a node should have given its cloud addresses:
//! k8s.io/cloud-provider's `updateNodeAddress` merge rules.

use k8s_openapi::api::core::v1::{Node, NodeAddress};

use super::node_ip::{self, NodeIpError, PROVIDED_NODE_IP_ANNOTATION};
use super::taints;
use crate::instances;

const HOSTNAME: &str = "Hostname";

/// The instances module's addresses as Kubernetes `NodeAddress`es, in order.
pub fn from_cloud(cloud: &[instances::NodeAddress]) -> Vec<NodeAddress> {
    cloud
        .iter()
        .map(|address| NodeAddress {
            type_: address.address_type.as_str().to_string(),
            address: address.address.clone(),
        })
        .collect()
}

/// The node's kubelet annotation `alpha.kubernetes.io/provided-node-ip`.
pub fn provided_node_ip(node: &Node) -> Option<&str> {
    node.metadata
        .annotations
        .as_ref()?
        .get(PROVIDED_NODE_IP_ANNOTATION)
        .map(String::as_str)
}

/// The addresses to write, or `None` when nothing should be written: the
/// node is still uninitialised, the cloud gave no address (the existing
/// ones are kept), or the result differs from the current list only in order.
///
/// Without a cloud `Hostname`, the node's (kubelet's) `Hostname` addresses
/// are kept, after the cloud's. A provided node IP then picks and orders
/// the addresses; one the cloud does not have is an error.
pub fn desired_addresses(
    node: &Node,
    cloud: &[NodeAddress],
) -> Result<Option<Vec<NodeAddress>>, NodeIpError> {
    if taints::is_uninitialized(node) || cloud.is_empty() {
        return Ok(None);
    }
    let current = current_addresses(node);
    let mut desired = cloud.to_vec();
    if !cloud.iter().any(|address| address.type_ == HOSTNAME) {
        desired.extend(
            current
                .iter()
                .filter(|address| address.type_ == HOSTNAME)
                .cloned(),
        );
    }
    if let Some(provided) = provided_node_ip(node) {
        desired = node_ip::addresses_for_node_ip(provided, &desired)?;
    }
    Ok(addresses_changed(current, &desired).then_some(desired))
}

fn current_addresses(node: &Node) -> &[NodeAddress] {
    node.status
        .as_ref()
        .and_then(|status| status.addresses.as_deref())
        .unwrap_or_default()
}

/// Whether two address lists differ other than in order. Upstream compares
/// against a type → address map, which sees a node with two addresses of one
/// type as changed on every pass; comparing the sorted pairs does not.
pub fn addresses_changed(old: &[NodeAddress], new: &[NodeAddress]) -> bool {
    if old.len() != new.len() {
        return true;
    }
    sorted_pairs(old) != sorted_pairs(new)
}

fn sorted_pairs(list: &[NodeAddress]) -> Vec<(&str, &str)> {
    let mut pairs: Vec<(&str, &str)> = list
        .iter()
        .map(|a| (a.type_.as_str(), a.address.as_str()))
        .collect();
    pairs.sort_unstable();
    pairs
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{NodeSpec, NodeStatus, Taint};
    use kube::api::ObjectMeta;

    use super::*;

    fn addresses(list: &[(&str, &str)]) -> Vec<NodeAddress> {
        list.iter()
            .map(|(type_, address)| NodeAddress {
                type_: type_.to_string(),
                address: address.to_string(),
            })
            .collect()
    }

    fn node(current: &[(&str, &str)], provided_ip: Option<&str>, uninitialized: bool) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some("node0".into()),
                annotations: provided_ip.map(|ip| {
                    BTreeMap::from([(PROVIDED_NODE_IP_ANNOTATION.to_string(), ip.to_string())])
                }),
                ..ObjectMeta::default()
            },
            spec: Some(NodeSpec {
                taints: uninitialized.then(|| {
                    vec![Taint {
                        key: taints::UNINITIALIZED_TAINT_KEY.into(),
                        value: Some("true".into()),
                        effect: "NoSchedule".into(),
                        time_added: None,
                    }]
                }),
                ..NodeSpec::default()
            }),
            status: Some(NodeStatus {
                addresses: Some(addresses(current)),
                ..NodeStatus::default()
            }),
        }
    }

    #[test]
    fn change_detection_ignores_pure_reordering() {
        let internal = ("InternalIP", "10.0.0.1");
        let external = ("ExternalIP", "132.143.154.163");
        let hostname = ("Hostname", "hostname.zone.region.aws.test");
        type Pairs<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(&str, Pairs, Pairs, bool)] = &[
            ("same", &[internal, external], &[internal, external], false),
            (
                "external IP changed",
                &[internal, ("ExternalIP", "132.143.154.164")],
                &[internal, external],
                true,
            ),
            (
                "hostname added",
                &[internal, ("ExternalIP", "132.143.154.164")],
                &[internal, external, hostname],
                true,
            ),
            (
                "external IP removed",
                &[internal, external],
                &[internal],
                true,
            ),
            (
                "hostname added to one",
                &[internal],
                &[internal, hostname],
                true,
            ),
            (
                "only the order differs",
                &[internal, external],
                &[external, internal],
                false,
            ),
            (
                "two addresses of one type, same",
                &[internal, ("InternalIP", "10.0.0.2")],
                &[("InternalIP", "10.0.0.2"), internal],
                false,
            ),
            (
                "two addresses of one type, one replaced by a duplicate",
                &[internal, ("InternalIP", "10.0.0.2")],
                &[("InternalIP", "10.0.0.2"), ("InternalIP", "10.0.0.2")],
                true,
            ),
            ("both empty", &[], &[], false),
        ];
        for (name, old, new, changed) in cases {
            assert_eq!(
                addresses_changed(&addresses(old), &addresses(new)),
                *changed,
                "{name}"
            );
        }
    }

    #[test]
    fn the_merge_follows_the_upstream_rules() {
        type Case<'a> = (
            &'a str,
            Node,
            Vec<(&'a str, &'a str)>,
            Result<Option<Vec<(&'a str, &'a str)>>, ()>,
        );
        let kubelet = [("InternalIP", "10.0.0.5"), ("Hostname", "kubelet-host")];
        let cases: Vec<Case> = vec![
            (
                "an uninitialised node is left alone",
                node(&kubelet, None, true),
                vec![("InternalIP", "10.0.0.1")],
                Ok(None),
            ),
            (
                "no cloud addresses keep the existing ones",
                node(&kubelet, None, false),
                vec![],
                Ok(None),
            ),
            (
                "the kubelet hostname is kept without a cloud hostname",
                node(&kubelet, None, false),
                vec![("InternalIP", "10.0.0.1")],
                Ok(Some(vec![
                    ("InternalIP", "10.0.0.1"),
                    ("Hostname", "kubelet-host"),
                ])),
            ),
            (
                "a cloud hostname replaces the kubelet's",
                node(&kubelet, None, false),
                vec![("InternalIP", "10.0.0.1"), ("Hostname", "vm-name")],
                Ok(Some(vec![
                    ("InternalIP", "10.0.0.1"),
                    ("Hostname", "vm-name"),
                ])),
            ),
            (
                "unchanged but reordered is not written",
                node(&kubelet, None, false),
                vec![("Hostname", "kubelet-host"), ("InternalIP", "10.0.0.5")],
                Ok(None),
            ),
            (
                "unchanged once the kubelet hostname is added back",
                node(&kubelet, None, false),
                vec![("InternalIP", "10.0.0.5")],
                Ok(None),
            ),
            (
                "the provided node IP comes first and drops others of its type",
                node(&[("Hostname", "kubelet-host")], Some("10.0.0.2"), false),
                vec![
                    ("InternalIP", "10.0.0.1"),
                    ("ExternalIP", "203.0.113.7"),
                    ("InternalIP", "10.0.0.2"),
                ],
                Ok(Some(vec![
                    ("InternalIP", "10.0.0.2"),
                    ("ExternalIP", "203.0.113.7"),
                    ("Hostname", "kubelet-host"),
                ])),
            ),
            (
                "a provided node IP the cloud lacks is an error",
                node(&kubelet, Some("10.9.9.9"), false),
                vec![("InternalIP", "10.0.0.1")],
                Err(()),
            ),
            (
                "an unparsable provided node IP is an error",
                node(&kubelet, Some("invalid-ip"), false),
                vec![("InternalIP", "10.0.0.1")],
                Err(()),
            ),
        ];
        for (name, node, cloud, expected) in cases {
            let got = desired_addresses(&node, &addresses(&cloud)).map_err(drop);
            let expected = expected.map(|list| list.map(|l| addresses(&l)));
            assert_eq!(got, expected, "{name}");
        }
    }

    #[test]
    fn cloud_addresses_keep_their_order_and_kind() {
        use crate::instances::{AddressType, NodeAddress as CloudAddress};
        let cloud = [
            CloudAddress::new(AddressType::InternalIp, "10.0.0.1"),
            CloudAddress::new(AddressType::ExternalIp, "203.0.113.1"),
            CloudAddress::new(AddressType::Hostname, "worker-0"),
        ];
        assert_eq!(
            from_cloud(&cloud),
            addresses(&[
                ("InternalIP", "10.0.0.1"),
                ("ExternalIP", "203.0.113.1"),
                ("Hostname", "worker-0"),
            ])
        );
    }
}

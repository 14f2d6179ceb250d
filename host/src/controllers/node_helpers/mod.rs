//! Sans-IO rules of the cloud node and lifecycle controllers, ported from
//! k8s.io/cloud-provider (`node/helpers`, `controllers/node`,
//! `controllers/nodelifecycle`): address merging, the provided node IP,
//! labels, taints and readiness. Everything here is a plain function on
//! Kubernetes data, tested with tables mirroring the upstream cases.

pub mod addresses;
pub mod initialize;
pub mod labels;
pub mod node_ip;
pub mod retry;
pub mod taints;

use k8s_openapi::api::core::v1::Node;

use crate::instances::NodeRef;

/// How the node is named to the cloud: its providerID once set, else its name.
pub fn node_ref(node: &Node) -> NodeRef<'_> {
    let name = node.metadata.name.as_deref().unwrap_or_default();
    match node.spec.as_ref().and_then(|s| s.provider_id.as_deref()) {
        Some(provider_id) if !provider_id.is_empty() => {
            NodeRef::named(name).with_provider_id(provider_id)
        }
        _ => NodeRef::named(name),
    }
}

/// Drops from a cached Node what no controller reads: the images its
/// kubelet pulled and its volumes, often most of a real Node's size. A
/// Node update never writes them back (the API server keeps the stored
/// status on writes of the Node itself), so the cache loses nothing.
pub fn trim_cached(node: &mut Node) {
    if let Some(status) = node.status.as_mut() {
        status.images = None;
        status.volumes_attached = None;
        status.volumes_in_use = None;
    }
}

/// Whether the node's `Ready` condition is `True`. An absent condition counts
/// as `Unknown`, as upstream.
pub fn is_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .and_then(|conditions| conditions.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|ready| ready.status == "True")
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus};
    use kube::api::ObjectMeta;

    use super::*;

    fn node_with_conditions(conditions: Option<Vec<(&str, &str)>>) -> Node {
        Node {
            status: Some(NodeStatus {
                conditions: conditions.map(|list| {
                    list.into_iter()
                        .map(|(type_, status)| NodeCondition {
                            type_: type_.to_string(),
                            status: status.to_string(),
                            ..NodeCondition::default()
                        })
                        .collect()
                }),
                ..NodeStatus::default()
            }),
            ..Node::default()
        }
    }

    #[test]
    fn readiness_follows_the_ready_condition_only() {
        type Conditions<'a> = Option<Vec<(&'a str, &'a str)>>;
        let cases: &[(&str, Conditions, bool)] = &[
            ("ready", Some(vec![("Ready", "True")]), true),
            ("not ready", Some(vec![("Ready", "False")]), false),
            ("unknown", Some(vec![("Ready", "Unknown")]), false),
            ("no conditions", None, false),
            (
                "other conditions only",
                Some(vec![("MemoryPressure", "True")]),
                false,
            ),
            (
                "ready among others",
                Some(vec![("DiskPressure", "False"), ("Ready", "True")]),
                true,
            ),
        ];
        for (name, conditions, ready) in cases {
            assert_eq!(
                is_ready(&node_with_conditions(conditions.clone())),
                *ready,
                "{name}"
            );
        }
        assert!(!is_ready(&Node::default()), "no status");
    }

    #[test]
    fn the_provider_id_names_the_node_once_set() {
        let mut node = Node {
            metadata: ObjectMeta {
                name: Some("worker-0".into()),
                ..ObjectMeta::default()
            },
            ..Node::default()
        };
        assert_eq!(node_ref(&node), NodeRef::named("worker-0"));
        node.spec = Some(NodeSpec {
            provider_id: Some(String::new()),
            ..NodeSpec::default()
        });
        assert_eq!(node_ref(&node), NodeRef::named("worker-0"));
        node.spec = Some(NodeSpec {
            provider_id: Some("vmware-cloud-director://urn:vcloud:vm:1".into()),
            ..NodeSpec::default()
        });
        assert_eq!(
            node_ref(&node),
            NodeRef::named("worker-0").with_provider_id("vmware-cloud-director://urn:vcloud:vm:1")
        );
    }
}

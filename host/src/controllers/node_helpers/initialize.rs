//! What initialising a node changes on the Node object: the providerID (only
//! if empty), the instance-type and topology labels (overwritten), and the
//! uninitialized taint (every taint with its key goes). Idempotent, so it
//! can be applied again to a re-read node after a conflict.

use k8s_openapi::api::core::v1::Node;

use super::{labels, taints};
use crate::instances::InstanceMetadata;

pub fn initialize(node: &mut Node, metadata: &InstanceMetadata) {
    let spec = node.spec.get_or_insert_default();
    if spec.provider_id.as_deref().unwrap_or_default().is_empty()
        && !metadata.provider_id.is_empty()
    {
        spec.provider_id = Some(metadata.provider_id.clone());
    }
    let remaining = taints::without_key(
        spec.taints.as_deref().unwrap_or_default(),
        taints::UNINITIALIZED_TAINT_KEY,
    );
    spec.taints = (!remaining.is_empty()).then_some(remaining);
    let cloud_labels = labels::cloud_labels(metadata);
    if !cloud_labels.is_empty() {
        node.metadata
            .labels
            .get_or_insert_default()
            .extend(cloud_labels);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{NodeSpec, Taint};
    use kube::api::ObjectMeta;

    use super::*;

    const PROVIDER_ID: &str = "vmware-cloud-director://urn:vcloud:vm:1";

    fn taint(key: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: Some("true".into()),
            effect: effect.into(),
            time_added: None,
        }
    }

    fn node(provider_id: Option<&str>, taints: Vec<Taint>, labels: &[(&str, &str)]) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some("worker-0".into()),
                labels: (!labels.is_empty()).then(|| {
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect()
                }),
                ..ObjectMeta::default()
            },
            spec: Some(NodeSpec {
                provider_id: provider_id.map(Into::into),
                taints: Some(taints),
                ..NodeSpec::default()
            }),
            status: None,
        }
    }

    fn metadata(zone: Option<&str>) -> InstanceMetadata {
        InstanceMetadata {
            provider_id: PROVIDER_ID.into(),
            instance_type: Some("vcd-vm.cpu-2.mem-4GiB".into()),
            addresses: vec![],
            zone: zone.map(Into::into),
            region: None,
        }
    }

    fn provider_id(node: &Node) -> Option<&str> {
        node.spec.as_ref()?.provider_id.as_deref()
    }

    #[test]
    fn the_provider_id_is_set_only_when_empty() {
        let cases = [
            ("unset", None, PROVIDER_ID),
            ("empty", Some(""), PROVIDER_ID),
            ("kept", Some("kubelet://given"), "kubelet://given"),
        ];
        for (name, given, expected) in cases {
            let mut node = node(given, vec![], &[]);
            initialize(&mut node, &metadata(None));
            assert_eq!(provider_id(&node), Some(expected), "{name}");
        }
    }

    #[test]
    fn every_uninitialized_taint_goes_and_others_stay() {
        let dedicated = taint("dedicated", "NoSchedule");
        let mut tainted = node(
            None,
            vec![
                taint(taints::UNINITIALIZED_TAINT_KEY, "NoSchedule"),
                dedicated.clone(),
                taint(taints::UNINITIALIZED_TAINT_KEY, "NoExecute"),
            ],
            &[],
        );
        initialize(&mut tainted, &metadata(None));
        assert_eq!(tainted.spec.as_ref().unwrap().taints, Some(vec![dedicated]));

        let mut only = node(
            None,
            vec![taint(taints::UNINITIALIZED_TAINT_KEY, "NoSchedule")],
            &[],
        );
        initialize(&mut only, &metadata(None));
        assert_eq!(only.spec.as_ref().unwrap().taints, None, "no empty list");
    }

    #[test]
    fn cloud_labels_overwrite_and_other_labels_stay() {
        let mut node = node(
            None,
            vec![],
            &[
                ("app", "web"),
                (labels::ZONE, "stale"),
                (labels::INSTANCE_TYPE_BETA, "stale"),
            ],
        );
        initialize(&mut node, &metadata(Some("zone-a")));
        let expected: BTreeMap<String, String> = [
            ("app", "web"),
            (labels::ZONE, "zone-a"),
            (labels::ZONE_BETA, "zone-a"),
            (labels::INSTANCE_TYPE, "vcd-vm.cpu-2.mem-4GiB"),
            (labels::INSTANCE_TYPE_BETA, "vcd-vm.cpu-2.mem-4GiB"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(node.metadata.labels, Some(expected));
    }

    #[test]
    fn applying_twice_changes_nothing_more() {
        let mut once = node(
            None,
            vec![taint(taints::UNINITIALIZED_TAINT_KEY, "NoSchedule")],
            &[],
        );
        initialize(&mut once, &metadata(Some("zone-a")));
        let mut twice = once.clone();
        initialize(&mut twice, &metadata(Some("zone-a")));
        assert_eq!(once, twice);
    }
}

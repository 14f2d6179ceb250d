//! The topology and instance-type labels: the ones written at
//! initialisation, and the beta → GA copy kept up on initialised nodes.

use std::collections::BTreeMap;

use crate::instances::InstanceMetadata;

/// The GA instance-type label (the VM's sizing policy).
pub const INSTANCE_TYPE: &str = "node.kubernetes.io/instance-type";
pub const INSTANCE_TYPE_BETA: &str = "beta.kubernetes.io/instance-type";
/// The GA zone label.
pub const ZONE: &str = "topology.kubernetes.io/zone";
pub const ZONE_BETA: &str = "failure-domain.beta.kubernetes.io/zone";
pub const REGION: &str = "topology.kubernetes.io/region";
pub const REGION_BETA: &str = "failure-domain.beta.kubernetes.io/region";

/// (beta, GA) pairs; the beta label is the source of truth, as upstream.
const BETA_TO_GA: [(&str, &str); 3] = [
    (ZONE_BETA, ZONE),
    (REGION_BETA, REGION),
    (INSTANCE_TYPE_BETA, INSTANCE_TYPE),
];

/// The labels initialisation writes, overwriting existing values: both the
/// GA and the beta key of each value the cloud knows. Empty values are none.
pub fn cloud_labels(metadata: &InstanceMetadata) -> BTreeMap<String, String> {
    let values = [
        (&metadata.instance_type, INSTANCE_TYPE, INSTANCE_TYPE_BETA),
        (&metadata.zone, ZONE, ZONE_BETA),
        (&metadata.region, REGION, REGION_BETA),
    ];
    values
        .into_iter()
        .filter_map(|(value, ga, beta)| {
            value
                .as_deref()
                .filter(|v| !v.is_empty())
                .map(|v| (v, ga, beta))
        })
        .flat_map(|(value, ga, beta)| {
            [
                (ga.to_string(), value.to_string()),
                (beta.to_string(), value.to_string()),
            ]
        })
        .collect()
}

/// The GA labels to set so that each matches its beta label
/// (`reconcileNodeLabels`). A missing beta label sets nothing; GA labels are
/// never copied back.
pub fn labels_to_reconcile(labels: Option<&BTreeMap<String, String>>) -> BTreeMap<String, String> {
    let Some(labels) = labels else {
        return BTreeMap::new();
    };
    BETA_TO_GA
        .iter()
        .filter_map(|(beta, ga)| {
            let primary = labels.get(*beta)?;
            (labels.get(*ga) != Some(primary)).then(|| (ga.to_string(), primary.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn beta_labels_are_copied_to_ga_labels() {
        type Labels = BTreeMap<String, String>;
        let cases: Vec<(&str, Option<Labels>, Labels)> = vec![
            ("no labels", None, map(&[])),
            ("no topology labels", Some(map(&[("app", "x")])), map(&[])),
            (
                "requires reconcile",
                Some(map(&[
                    (ZONE_BETA, "foo"),
                    (REGION_BETA, "bar"),
                    (INSTANCE_TYPE_BETA, "the-best-type"),
                ])),
                map(&[
                    (ZONE, "foo"),
                    (REGION, "bar"),
                    (INSTANCE_TYPE, "the-best-type"),
                ]),
            ),
            (
                "does not require reconcile",
                Some(map(&[
                    (ZONE_BETA, "foo"),
                    (REGION_BETA, "bar"),
                    (INSTANCE_TYPE_BETA, "the-best-type"),
                    (ZONE, "foo"),
                    (REGION, "bar"),
                    (INSTANCE_TYPE, "the-best-type"),
                ])),
                map(&[]),
            ),
            (
                "GA labels differ from beta labels",
                Some(map(&[
                    (ZONE_BETA, "foo"),
                    (REGION_BETA, "bar"),
                    (INSTANCE_TYPE_BETA, "the-best-type"),
                    (ZONE, "wrongfoo"),
                    (REGION, "wrongbar"),
                    (INSTANCE_TYPE, "the-wrong-type"),
                ])),
                map(&[
                    (ZONE, "foo"),
                    (REGION, "bar"),
                    (INSTANCE_TYPE, "the-best-type"),
                ]),
            ),
            (
                "GA labels alone are not copied back",
                Some(map(&[(ZONE, "foo"), (INSTANCE_TYPE, "t")])),
                map(&[]),
            ),
            (
                "only the zone needs it",
                Some(map(&[
                    (ZONE_BETA, "foo"),
                    (INSTANCE_TYPE_BETA, "t"),
                    (INSTANCE_TYPE, "t"),
                ])),
                map(&[(ZONE, "foo")]),
            ),
        ];
        for (name, labels, expected) in cases {
            assert_eq!(labels_to_reconcile(labels.as_ref()), expected, "{name}");
        }
    }

    fn metadata(
        instance_type: Option<&str>,
        zone: Option<&str>,
        region: Option<&str>,
    ) -> InstanceMetadata {
        InstanceMetadata {
            provider_id: "vmware-cloud-director://urn:vcloud:vm:1".into(),
            instance_type: instance_type.map(Into::into),
            addresses: vec![],
            zone: zone.map(Into::into),
            region: region.map(Into::into),
        }
    }

    #[test]
    fn each_cloud_value_sets_its_ga_and_beta_label() {
        let cases = [
            ("nothing known", metadata(None, None, None), map(&[])),
            ("empty values", metadata(Some(""), Some(""), None), map(&[])),
            (
                "instance type only",
                metadata(Some("vcd-vm.cpu-2.mem-4GiB"), None, None),
                map(&[
                    (INSTANCE_TYPE, "vcd-vm.cpu-2.mem-4GiB"),
                    (INSTANCE_TYPE_BETA, "vcd-vm.cpu-2.mem-4GiB"),
                ]),
            ),
            (
                "all three",
                metadata(Some("t"), Some("zone-a"), Some("region-1")),
                map(&[
                    (INSTANCE_TYPE, "t"),
                    (INSTANCE_TYPE_BETA, "t"),
                    (ZONE, "zone-a"),
                    (ZONE_BETA, "zone-a"),
                    (REGION, "region-1"),
                    (REGION_BETA, "region-1"),
                ]),
            ),
        ];
        for (name, metadata, expected) in cases {
            assert_eq!(cloud_labels(&metadata), expected, "{name}");
        }
    }
}

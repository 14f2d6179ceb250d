//! The two taints the cloud controllers own, and the edits they make to a
//! node's taint list (client-go's `AddOrUpdateTaint` / `RemoveTaint`).

use k8s_openapi::api::core::v1::{Node, Taint};

/// Set by a kubelet started with `--cloud-provider=external`; removed once
/// the cloud node controller has initialised the node. Matched by key only.
pub const UNINITIALIZED_TAINT_KEY: &str = "node.cloudprovider.kubernetes.io/uninitialized";
/// Put on NotReady nodes whose VM is shut down; removed once Ready.
pub const SHUTDOWN_TAINT_KEY: &str = "node.cloudprovider.kubernetes.io/shutdown";

/// `node.cloudprovider.kubernetes.io/shutdown:NoSchedule`, no value, no time.
pub fn shutdown_taint() -> Taint {
    Taint {
        key: SHUTDOWN_TAINT_KEY.to_string(),
        effect: "NoSchedule".to_string(),
        value: None,
        time_added: None,
    }
}

pub fn node_taints(node: &Node) -> &[Taint] {
    node.spec
        .as_ref()
        .and_then(|spec| spec.taints.as_deref())
        .unwrap_or_default()
}

/// Whether the node still waits for the cloud node controller.
pub fn is_uninitialized(node: &Node) -> bool {
    node_taints(node)
        .iter()
        .any(|taint| taint.key == UNINITIALIZED_TAINT_KEY)
}

/// The taints without any whose key is `key`.
pub fn without_key(taints: &[Taint], key: &str) -> Vec<Taint> {
    taints.iter().filter(|t| t.key != key).cloned().collect()
}

/// `Taint.MatchTaint`: same key and effect; value and time do not matter.
pub fn matches(a: &Taint, b: &Taint) -> bool {
    a.key == b.key && a.effect == b.effect
}

pub fn has_matching(taints: &[Taint], taint: &Taint) -> bool {
    taints.iter().any(|t| matches(t, taint))
}

/// The list with `taint` added, or a matching one replaced in place; `None`
/// when an identical taint is already there.
pub fn with_taint(taints: &[Taint], taint: &Taint) -> Option<Vec<Taint>> {
    if taints.iter().any(|t| t == taint) {
        return None;
    }
    let mut replaced = false;
    let mut updated: Vec<Taint> = taints
        .iter()
        .map(|t| {
            if matches(t, taint) {
                replaced = true;
                taint.clone()
            } else {
                t.clone()
            }
        })
        .collect();
    if !replaced {
        updated.push(taint.clone());
    }
    Some(updated)
}

/// The list without taints matching `taint`; `None` when none matched.
pub fn without_taint(taints: &[Taint], taint: &Taint) -> Option<Vec<Taint>> {
    has_matching(taints, taint).then(|| {
        taints
            .iter()
            .filter(|t| !matches(t, taint))
            .cloned()
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::NodeSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
            time_added: None,
        }
    }

    /// A name, the taints before, the taints after (`None`: unchanged).
    type EditCase = (&'static str, Vec<Taint>, Option<Vec<Taint>>);

    fn uninitialized(effect: &str) -> Taint {
        taint(UNINITIALIZED_TAINT_KEY, Some("true"), effect)
    }

    #[test]
    fn the_uninitialized_taint_is_matched_by_key_only() {
        let other = taint("dedicated", Some("gpu"), "NoSchedule");
        let cases: Vec<(&str, Option<Vec<Taint>>, bool)> = vec![
            ("no taints", None, false),
            ("empty", Some(vec![]), false),
            ("other taint", Some(vec![other.clone()]), false),
            ("NoSchedule", Some(vec![uninitialized("NoSchedule")]), true),
            (
                "NoExecute, no value",
                Some(vec![taint(UNINITIALIZED_TAINT_KEY, None, "NoExecute")]),
                true,
            ),
            (
                "among others",
                Some(vec![other.clone(), uninitialized("NoSchedule")]),
                true,
            ),
        ];
        for (name, taints, expected) in cases {
            let node = Node {
                spec: Some(NodeSpec {
                    taints,
                    ..NodeSpec::default()
                }),
                ..Node::default()
            };
            assert_eq!(is_uninitialized(&node), expected, "{name}");
        }
        assert!(!is_uninitialized(&Node::default()), "no spec");
    }

    #[test]
    fn every_taint_with_the_key_is_removed_and_others_kept() {
        let other = taint("dedicated", Some("gpu"), "NoSchedule");
        let taints = vec![
            uninitialized("NoSchedule"),
            other.clone(),
            uninitialized("NoExecute"),
        ];
        assert_eq!(without_key(&taints, UNINITIALIZED_TAINT_KEY), vec![other]);
        assert!(without_key(&[], UNINITIALIZED_TAINT_KEY).is_empty());
    }

    #[test]
    fn adding_the_shutdown_taint() {
        let shutdown = shutdown_taint();
        let other = taint("dedicated", Some("gpu"), "NoSchedule");
        let with_value = taint(SHUTDOWN_TAINT_KEY, Some("x"), "NoSchedule");
        let timed = Taint {
            time_added: Some(Time(jiff::Timestamp::UNIX_EPOCH)),
            ..shutdown.clone()
        };
        let other_effect = taint(SHUTDOWN_TAINT_KEY, None, "NoExecute");
        let cases: Vec<EditCase> = vec![
            ("none yet", vec![], Some(vec![shutdown.clone()])),
            (
                "appended after others",
                vec![other.clone()],
                Some(vec![other.clone(), shutdown.clone()]),
            ),
            ("already there", vec![other.clone(), shutdown.clone()], None),
            (
                "a matching one with a value is replaced in place",
                vec![with_value, other.clone()],
                Some(vec![shutdown.clone(), other.clone()]),
            ),
            (
                "a matching one with a time is replaced",
                vec![timed],
                Some(vec![shutdown.clone()]),
            ),
            (
                "another effect does not match",
                vec![other_effect.clone()],
                Some(vec![other_effect, shutdown.clone()]),
            ),
        ];
        for (name, taints, expected) in cases {
            assert_eq!(with_taint(&taints, &shutdown), expected, "{name}");
        }
    }

    #[test]
    fn removing_the_shutdown_taint() {
        let shutdown = shutdown_taint();
        let other = taint("dedicated", Some("gpu"), "NoSchedule");
        let with_value = taint(SHUTDOWN_TAINT_KEY, Some("x"), "NoSchedule");
        let other_effect = taint(SHUTDOWN_TAINT_KEY, None, "NoExecute");
        let cases: Vec<EditCase> = vec![
            ("absent", vec![other.clone()], None),
            ("empty", vec![], None),
            (
                "present",
                vec![other.clone(), shutdown.clone()],
                Some(vec![other.clone()]),
            ),
            ("matched by key and effect", vec![with_value], Some(vec![])),
            ("another effect stays", vec![other_effect], None),
        ];
        for (name, taints, expected) in cases {
            assert_eq!(
                has_matching(&taints, &shutdown),
                expected.is_some(),
                "{name}"
            );
            assert_eq!(without_taint(&taints, &shutdown), expected, "{name}");
        }
    }
}

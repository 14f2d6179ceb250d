//! Kubernetes label selectors (`matchLabels` + `matchExpressions`), for choosing
//! policies by namespace labels.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::model::Pairs;

/// A label selector as in `metav1.LabelSelector`. The empty selector matches everything.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelector {
    /// `matchLabels`: labels that must be present with exactly these values.
    #[serde(default)]
    pub match_labels: BTreeMap<String, String>,
    /// `matchExpressions`: requirements that must all hold.
    #[serde(default)]
    pub match_expressions: Vec<Requirement>,
}

/// One entry of `matchExpressions`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Requirement {
    /// The label the requirement is about.
    pub key: String,
    /// How the label is tested.
    pub operator: Operator,
    /// The values `In` and `NotIn` compare with; empty for `Exists` and `DoesNotExist`.
    #[serde(default)]
    pub values: Vec<String>,
}

/// A [`Requirement`]'s operator, spelled as in Kubernetes.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum Operator {
    /// The label is present with one of the values.
    In,
    /// The label is absent or has none of the values.
    NotIn,
    /// The label is present, with any value.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

impl LabelSelector {
    /// Whether `labels` satisfy every `matchLabels` entry and every requirement.
    pub fn matches(&self, labels: &Pairs) -> bool {
        let value = |key: &str| {
            labels
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        self.match_labels
            .iter()
            .all(|(key, wanted)| value(key) == Some(wanted.as_str()))
            && self
                .match_expressions
                .iter()
                .all(|req| match (req.operator, value(&req.key)) {
                    (Operator::In, Some(v)) => req.values.iter().any(|w| w == v),
                    (Operator::In, None) => false,
                    (Operator::NotIn, Some(v)) => !req.values.iter().any(|w| w == v),
                    (Operator::NotIn, None) => true,
                    (Operator::Exists, found) => found.is_some(),
                    (Operator::DoesNotExist, found) => found.is_none(),
                })
    }

    /// The rule `metav1` enforces: `In`/`NotIn` need values, `Exists`/`DoesNotExist` take none.
    pub fn validate(&self) -> Result<(), String> {
        for (i, req) in self.match_expressions.iter().enumerate() {
            let needs_values = matches!(req.operator, Operator::In | Operator::NotIn);
            if needs_values == req.values.is_empty() {
                let rule = if needs_values {
                    "needs at least one value"
                } else {
                    "takes no values"
                };
                return Err(format!(
                    "matchExpressions[{i}]: operator {:?} {rule}",
                    req.operator
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Pairs {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn selector(yaml: &str) -> LabelSelector {
        let selector: LabelSelector = serde_yaml_ng::from_str(yaml).unwrap();
        selector.validate().unwrap();
        selector
    }

    #[test]
    fn empty_selector_matches_everything() {
        assert!(selector("{}").matches(&labels(&[])));
    }

    #[test]
    fn match_labels_and_expressions_all_apply() {
        let s = selector(
            "matchLabels: {tier: gold}\nmatchExpressions:\n- {key: env, operator: In, values: [prod, stage]}\n- {key: legacy, operator: DoesNotExist}",
        );
        assert!(s.matches(&labels(&[("tier", "gold"), ("env", "prod")])));
        assert!(!s.matches(&labels(&[("tier", "gold"), ("env", "dev")])));
        assert!(!s.matches(&labels(&[
            ("tier", "gold"),
            ("env", "prod"),
            ("legacy", "")
        ])));
        assert!(!s.matches(&labels(&[("env", "prod")])));
    }

    #[test]
    fn not_in_and_exists() {
        let s = selector(
            "matchExpressions:\n- {key: env, operator: NotIn, values: [dev]}\n- {key: team, operator: Exists}",
        );
        assert!(s.matches(&labels(&[("team", "a")])));
        assert!(!s.matches(&labels(&[("team", "a"), ("env", "dev")])));
        assert!(!s.matches(&labels(&[])));
    }

    #[test]
    fn operators_are_checked_for_values() {
        let s: LabelSelector =
            serde_yaml_ng::from_str("matchExpressions: [{key: a, operator: In}]").unwrap();
        assert_eq!(
            s.validate().unwrap_err(),
            "matchExpressions[0]: operator In needs at least one value"
        );
    }
}

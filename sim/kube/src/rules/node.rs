//! Nodes: status is settable on create (the kubelet registers that way), providerID
//! and podCIDR are write-once, taints are validated.

use super::{Endpoint, KindRules, Peers, check};
use crate::error::FieldError;
use crate::object::str_at;
use serde_json::Value;
use std::collections::HashSet;

pub struct NodeRules;

const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

fn check_taints(node: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let taints = node
        .pointer("/spec/taints")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut seen = HashSet::new();
    for (i, taint) in taints.iter().enumerate() {
        let key = taint.get("key").and_then(Value::as_str).unwrap_or_default();
        let effect = taint
            .get("effect")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if key.is_empty() {
            errors.push(FieldError::required(format!("spec.taints[{i}].key")));
        }
        if effect.is_empty() {
            errors.push(FieldError::required(format!("spec.taints[{i}].effect")));
        } else if !TAINT_EFFECTS.contains(&effect) {
            errors.push(FieldError::not_supported(
                format!("spec.taints[{i}].effect"),
                effect,
                &TAINT_EFFECTS,
            ));
        }
        if !seen.insert((key, effect)) {
            errors.push(FieldError::duplicate(
                format!("spec.taints[{i}]"),
                format!("{{{key} {effect}}}"),
            ));
        }
    }
    errors
}

/// A field that may go from empty to a value once, and never change after.
fn check_write_once(old: &Value, new: &Value, path: &str, field: &str) -> Option<FieldError> {
    let before = str_at(old, path).unwrap_or_default();
    let after = str_at(new, path).unwrap_or_default();
    (!before.is_empty() && before != after).then(|| {
        FieldError::forbidden(
            field,
            format!("node updates may not change {field} except from \"\" to valid"),
        )
    })
}

impl KindRules for NodeRules {
    fn keeps_status_on_create(&self) -> bool {
        true
    }

    fn prepare_create(&self, object: &mut Value, _peers: &Peers) -> Result<(), Vec<FieldError>> {
        check(check_taints(object))
    }

    fn prepare_update(
        &self,
        old: &Value,
        new: &mut Value,
        _endpoint: Endpoint,
        _peers: &Peers,
    ) -> Result<(), Vec<FieldError>> {
        let mut errors = check_taints(new);
        errors.extend(check_write_once(
            old,
            new,
            "spec.providerID",
            "spec.providerID",
        ));
        errors.extend(check_write_once(old, new, "spec.podCIDR", "spec.podCIDR"));
        check(errors)
    }
}

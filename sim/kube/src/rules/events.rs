//! Events: core/v1 and events.k8s.io/v1 are two views of one stored object.
//!
//! The store keeps the core/v1 shape; events.k8s.io/v1 renames a handful of fields.

use super::{Endpoint, KindRules, Peers, check};
use crate::error::FieldError;
use serde_json::{Map, Value};

/// (events.k8s.io/v1 field, core/v1 field) pairs that differ only in name.
const RENAMED: [(&str, &str); 7] = [
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

fn rename(object: Value, from_v1: bool) -> Value {
    let Value::Object(map) = object else {
        return object;
    };
    let renamed: Map<String, Value> = map
        .into_iter()
        .map(|(key, value)| {
            let new_key = RENAMED
                .iter()
                .find(|(v1, core)| if from_v1 { v1 == &key } else { core == &key })
                .map(|(v1, core)| if from_v1 { *core } else { *v1 })
                .unwrap_or(&key)
                .to_string();
            (new_key, value)
        })
        .collect();
    Value::Object(renamed)
}

fn check_type(object: &Value) -> Vec<FieldError> {
    match object.get("type").and_then(Value::as_str) {
        None | Some("Normal") | Some("Warning") => Vec::new(),
        Some(other) => vec![FieldError::not_supported(
            "type",
            other,
            &["Normal", "Warning"],
        )],
    }
}

pub struct CoreEventRules;

impl KindRules for CoreEventRules {
    fn prepare_create(&self, object: &mut Value, _peers: &Peers) -> Result<(), Vec<FieldError>> {
        check(check_type(object))
    }

    fn prepare_update(
        &self,
        _old: &Value,
        new: &mut Value,
        _endpoint: Endpoint,
        _peers: &Peers,
    ) -> Result<(), Vec<FieldError>> {
        check(check_type(new))
    }
}

pub struct EventsV1Rules;

impl KindRules for EventsV1Rules {
    fn to_storage(&self, wire: Value) -> Value {
        rename(wire, true)
    }

    fn to_wire(&self, stored: Value) -> Value {
        rename(stored, false)
    }

    fn prepare_create(&self, object: &mut Value, _peers: &Peers) -> Result<(), Vec<FieldError>> {
        let mut errors = check_type(object);
        for field in [
            "eventTime",
            "reportingComponent",
            "reportingInstance",
            "action",
            "reason",
        ] {
            if object.get(field).is_none_or(|v| v.is_null() || v == "") {
                // Report the events.k8s.io/v1 name, which is what the client sent.
                let wire_name = RENAMED
                    .iter()
                    .find(|(_, core)| *core == field)
                    .map_or(field, |(v1, _)| *v1);
                errors.push(FieldError::required(wire_name));
            }
        }
        check(errors)
    }

    fn prepare_update(
        &self,
        old: &Value,
        new: &mut Value,
        endpoint: Endpoint,
        peers: &Peers,
    ) -> Result<(), Vec<FieldError>> {
        CoreEventRules.prepare_update(old, new, endpoint, peers)
    }
}

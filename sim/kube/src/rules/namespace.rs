//! Namespaces: RFC 1123 label names and the `Active` phase.

use super::{Endpoint, KindRules, NameRule, Peers};
use crate::error::FieldError;
use crate::object::map_entry;
use serde_json::{Value, json};

pub struct NamespaceRules;

impl KindRules for NamespaceRules {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn prepare_create(&self, object: &mut Value, _peers: &Peers) -> Result<(), Vec<FieldError>> {
        map_entry(object, "spec")
            .entry("finalizers")
            .or_insert_with(|| json!(["kubernetes"]));
        map_entry(object, "status").insert("phase".into(), json!("Active"));
        Ok(())
    }

    fn prepare_update(
        &self,
        old: &Value,
        new: &mut Value,
        _endpoint: Endpoint,
        _peers: &Peers,
    ) -> Result<(), Vec<FieldError>> {
        // spec.finalizers only changes through the /finalize subresource.
        if let Some(spec) = old.get("spec") {
            new["spec"] = spec.clone();
        }
        Ok(())
    }
}

//! Per-kind rules: what makes each kind different from a plain JSON document.
//!
//! The store is generic; everything kind-specific (defaults, validation, immutable
//! fields, allocation, version conversion) lives behind [`KindRules`].

mod config;
mod events;
mod names;
mod namespace;
mod node;
mod service;
mod service_alloc;

pub use config::{ConfigMapRules, SecretRules};
pub use events::{CoreEventRules, EventsV1Rules};
pub use names::{NameRule, check_labels_and_annotations};
pub use namespace::NamespaceRules;
pub use node::NodeRules;
pub use service::ServiceRules;

use crate::error::FieldError;
use crate::object::ObjectKey;
use serde_json::Value;
use std::collections::BTreeMap;

/// Which endpoint a write came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// The object itself: status changes are ignored.
    Main,
    /// The `/status` subresource: only status (and metadata) changes are kept.
    Status,
}

/// The other stored objects of the same kind, for rules that allocate unique values.
pub struct Peers<'a> {
    objects: &'a BTreeMap<ObjectKey, Value>,
    own: Option<&'a ObjectKey>,
}

impl<'a> Peers<'a> {
    pub fn new(objects: &'a BTreeMap<ObjectKey, Value>, own: Option<&'a ObjectKey>) -> Self {
        Self { objects, own }
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a Value> + '_ {
        self.objects
            .iter()
            .filter(|(key, _)| Some(*key) != self.own)
            .map(|(_, object)| object)
    }
}

/// Kind-specific behaviour plugged into the generic store.
///
/// Objects passed in are in storage form (see [`KindRules::to_storage`]).
pub trait KindRules: Send + Sync {
    /// The syntax object names must follow.
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// Whether a create may set `status` (nodes) or has it reset (services).
    fn keeps_status_on_create(&self) -> bool {
        false
    }

    /// Whether an immediate delete answers with the object rather than a `Status`.
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// Converts a request body of this resource's version to the stored form.
    fn to_storage(&self, wire: Value) -> Value {
        wire
    }

    /// Converts a stored object to this resource's version.
    fn to_wire(&self, stored: Value) -> Value {
        stored
    }

    /// Defaults, allocates and validates a new object.
    fn prepare_create(&self, _object: &mut Value, _peers: &Peers) -> Result<(), Vec<FieldError>> {
        Ok(())
    }

    /// Defaults, allocates and validates a changed object against its previous state.
    fn prepare_update(
        &self,
        _old: &Value,
        _new: &mut Value,
        _endpoint: Endpoint,
        _peers: &Peers,
    ) -> Result<(), Vec<FieldError>> {
        Ok(())
    }
}

/// Rules for kinds with no behaviour beyond the generic store.
pub struct PlainRules;

impl KindRules for PlainRules {}

/// Turns a list of field errors into a `Result`.
pub(crate) fn check(errors: Vec<FieldError>) -> Result<(), Vec<FieldError>> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

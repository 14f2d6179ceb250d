//! Update rules every kind shares: preconditions, status separation, system
//! metadata and finalizers on Terminating objects.

use super::object_ref;
use crate::error::{ApiError, FieldError};
use crate::object::{self, metadata_mut};
use crate::resources::ResourceType;
use crate::rules::Endpoint;
use serde_json::{Value, json};

/// Metadata the server owns: a client cannot change these through an update.
const SYSTEM_METADATA: [&str; 6] = [
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
    "namespace",
];

/// A stale resourceVersion or a different uid in the body is a 409 Conflict.
pub(super) fn check_preconditions(
    resource: &ResourceType,
    old: &Value,
    new: &Value,
) -> Result<(), ApiError> {
    let name = object::name(old);
    if let Some(rv) = object::resource_version(new)
        && Some(rv) != object::resource_version(old)
    {
        return Err(ApiError::Conflict {
            object: object_ref(resource, name),
            detail: "the object has been modified; please apply your changes to the latest version and try again".into(),
        });
    }
    if let Some(uid) = object::uid(new)
        && Some(uid) != object::uid(old)
    {
        return Err(ApiError::Conflict {
            object: object_ref(resource, name),
            detail: format!(
                "Precondition failed: UID in precondition: {}, UID in object meta: {uid}",
                object::uid(old).unwrap_or_default()
            ),
        });
    }
    Ok(())
}

/// Main-resource writes keep the stored status; `/status` writes keep everything
/// but status and metadata.
pub(super) fn separate_status(
    resource: &ResourceType,
    old: &Value,
    new: &mut Value,
    endpoint: Endpoint,
) {
    let (Some(old_map), Some(new_map)) = (old.as_object(), new.as_object_mut()) else {
        return;
    };
    match endpoint {
        Endpoint::Main if resource.has_status => match old_map.get("status") {
            Some(status) => {
                new_map.insert("status".into(), status.clone());
            }
            None => {
                new_map.remove("status");
            }
        },
        Endpoint::Main => {}
        Endpoint::Status => {
            new_map.retain(|k, _| k == "metadata" || k == "status");
            for (k, v) in old_map
                .iter()
                .filter(|(k, _)| *k != "metadata" && *k != "status")
            {
                new_map.insert(k.clone(), v.clone());
            }
        }
    }
}

pub(super) fn keep_system_metadata(old: &Value, new: &mut Value, name: &str) {
    let meta = metadata_mut(new);
    meta.insert("name".into(), json!(name));
    for field in SYSTEM_METADATA {
        match old.get("metadata").and_then(|m| m.get(field)) {
            Some(value) => meta.insert(field.into(), value.clone()),
            None => meta.remove(field),
        };
    }
}

pub(super) fn check_new_finalizers(old: &Value, new: &Value) -> Vec<FieldError> {
    if !object::is_deleting(old) {
        return Vec::new();
    }
    let before = object::finalizers(old);
    object::finalizers(new)
        .into_iter()
        .filter(|f| !before.contains(f))
        .map(|f| FieldError::forbidden("metadata.finalizers", format!("no new finalizers can be added if the object is being deleted, found new finalizers []string{{\"{f}\"}}")))
        .collect()
}

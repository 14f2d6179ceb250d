//! Deletes: finalizers hold an object in Terminating until the last one goes,
//! and deleting a namespace deletes what is in it.

use super::{
    Change, ChangeKind, ListOptions, State, Store, key, object_ref, set_revision, to_wire,
};
use crate::error::ApiError;
use crate::object::{self, ObjectKey, metadata_mut};
use crate::resources::{RESOURCES, ResourceType};
use serde_json::{Value, json};

/// What a DELETE may carry: preconditions and dry run. Propagation policy and
/// grace period are accepted by the HTTP layer but change nothing here, as there
/// is no garbage collector and no kubelet.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    pub dry_run: bool,
    pub precondition_uid: Option<String>,
    pub precondition_resource_version: Option<String>,
}

/// The object after a delete request, and whether it is gone.
pub struct DeleteOutcome {
    pub object: Value,
    /// `false` while finalizers keep the object in Terminating.
    pub finished: bool,
}

impl Store {
    pub fn delete(
        &self,
        resource: &'static ResourceType,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<DeleteOutcome, ApiError> {
        let mut state = self.lock();
        self.delete_locked(
            &mut state,
            resource,
            key(resource, namespace, name),
            options,
        )
    }

    /// Deletes every selected object; answers with the list of them.
    pub fn delete_collection(
        &self,
        resource: &'static ResourceType,
        selection: &ListOptions,
        options: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        let mut state = self.lock();
        let keys: Vec<ObjectKey> = state
            .bucket(resource.bucket)
            .into_iter()
            .flatten()
            .filter(|(_, stored)| selection.selects(&to_wire(resource, stored)))
            .map(|(key, _)| key.clone())
            .collect();
        let mut items = Vec::new();
        for key in keys {
            items.push(
                self.delete_locked(&mut state, resource, key, options)?
                    .object,
            );
        }
        Ok(json!({
            "kind": format!("{}List", resource.kind),
            "apiVersion": resource.api_version(),
            "metadata": {"resourceVersion": state.revision.to_string()},
            "items": items,
        }))
    }

    fn delete_locked(
        &self,
        state: &mut State,
        resource: &'static ResourceType,
        key: ObjectKey,
        options: &DeleteOptions,
    ) -> Result<DeleteOutcome, ApiError> {
        let old = state
            .bucket(resource.bucket)
            .and_then(|b| b.get(&key))
            .cloned()
            .ok_or_else(|| ApiError::NotFound(object_ref(resource, &key.1)))?;
        check_preconditions(resource, &old, options)?;
        let pending = !object::finalizers(&old).is_empty();
        if options.dry_run {
            return Ok(DeleteOutcome {
                object: to_wire(resource, &old),
                finished: !pending,
            });
        }
        if pending {
            let object = self.mark_deleting(state, resource.bucket, &key);
            return Ok(DeleteOutcome {
                object: to_wire(resource, &object),
                finished: false,
            });
        }
        if resource.plural == "namespaces" && resource.group.is_empty() {
            self.empty_namespace(state, &key.1);
        }
        Ok(DeleteOutcome {
            object: self.remove_locked(state, resource, &key),
            finished: true,
        })
    }

    /// Sets deletionTimestamp once; later deletes of a Terminating object change nothing.
    fn mark_deleting(&self, state: &mut State, bucket: &'static str, key: &ObjectKey) -> Value {
        let Some(old) = state.bucket(bucket).and_then(|b| b.get(key)).cloned() else {
            return Value::Null;
        };
        if object::is_deleting(&old) {
            return old;
        }
        let mut new = old.clone();
        let meta = metadata_mut(&mut new);
        meta.insert("deletionTimestamp".into(), json!(object::now_timestamp()));
        meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        let revision = state.next_revision();
        set_revision(&mut new, revision);
        state.bucket_mut(bucket).insert(key.clone(), new.clone());
        self.publish(
            state,
            Change {
                revision,
                bucket,
                kind: ChangeKind::Modified,
                object: new.clone(),
                previous: Some(old),
            },
        );
        new
    }

    /// Removes an object and publishes DELETED; returns it in served form.
    pub(super) fn remove_locked(
        &self,
        state: &mut State,
        resource: &ResourceType,
        key: &ObjectKey,
    ) -> Value {
        self.remove_stored(state, resource.bucket, key)
            .map(|object| to_wire(resource, &object))
            .unwrap_or(Value::Null)
    }

    fn remove_stored(
        &self,
        state: &mut State,
        bucket: &'static str,
        key: &ObjectKey,
    ) -> Option<Value> {
        let mut object = state.bucket_mut(bucket).remove(key)?;
        let revision = state.next_revision();
        set_revision(&mut object, revision);
        self.publish(
            state,
            Change {
                revision,
                bucket,
                kind: ChangeKind::Deleted,
                object: object.clone(),
                previous: None,
            },
        );
        Some(object)
    }

    /// Stands in for the namespace controller: deletes the namespace's contents
    /// (objects with finalizers are left Terminating).
    fn empty_namespace(&self, state: &mut State, namespace: &str) {
        let mut buckets: Vec<&'static str> = RESOURCES
            .iter()
            .filter(|r| r.namespaced)
            .map(|r| r.bucket)
            .collect();
        buckets.sort_unstable();
        buckets.dedup();
        for bucket in buckets {
            let keys: Vec<ObjectKey> = state
                .bucket(bucket)
                .into_iter()
                .flatten()
                .filter(|(key, _)| key.0 == namespace)
                .map(|(key, _)| key.clone())
                .collect();
            for key in keys {
                let has_finalizers = state
                    .bucket(bucket)
                    .and_then(|b| b.get(&key))
                    .is_some_and(|o| !object::finalizers(o).is_empty());
                if has_finalizers {
                    self.mark_deleting(state, bucket, &key);
                } else {
                    self.remove_stored(state, bucket, &key);
                }
            }
        }
    }
}

fn check_preconditions(
    resource: &ResourceType,
    old: &Value,
    options: &DeleteOptions,
) -> Result<(), ApiError> {
    let conflict = |detail: String| ApiError::Conflict {
        object: object_ref(resource, object::name(old)),
        detail,
    };
    if let Some(uid) = &options.precondition_uid
        && object::uid(old) != Some(uid.as_str())
    {
        return Err(conflict(format!(
            "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
            object::uid(old).unwrap_or_default()
        )));
    }
    if let Some(rv) = &options.precondition_resource_version
        && object::resource_version(old) != Some(rv.as_str())
    {
        return Err(conflict(format!(
            "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
            object::resource_version(old).unwrap_or_default()
        )));
    }
    Ok(())
}

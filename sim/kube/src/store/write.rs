//! Writes: create, update and patch, with the metadata rules every kind shares.

use super::update_rules::{
    check_new_finalizers, check_preconditions, keep_system_metadata, separate_status,
};
use super::{Change, ChangeKind, State, Store, key, object_ref, set_revision, to_wire};
use crate::error::{ApiError, FieldError};
use crate::object::{self, ObjectKey, metadata_mut};
use crate::patch::{self, PatchKind};
use crate::resources::{self, ResourceType};
use crate::rules::{Endpoint, Peers};
use serde_json::{Value, json};

/// Characters the API server draws `generateName` suffixes from.
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn random_suffix() -> String {
    uuid::Uuid::new_v4()
        .as_bytes()
        .iter()
        .take(5)
        .map(|b| NAME_ALPHABET[usize::from(*b) % NAME_ALPHABET.len()] as char)
        .collect()
}

/// The result of a successful write.
pub struct Written {
    /// The object in served form.
    pub object: Value,
    /// Whether the write created the object (201) rather than changed it (200).
    pub created: bool,
}

fn invalid(resource: &ResourceType, name: &str, causes: Vec<FieldError>) -> ApiError {
    ApiError::invalid(object_ref(resource, name), causes)
}

/// Checks a body's apiVersion/kind (filling them when absent) and converts it.
fn to_storage(resource: &ResourceType, mut body: Value) -> Result<Value, ApiError> {
    let Some(map) = body.as_object_mut() else {
        return Err(ApiError::BadRequest(
            "the request body must be a JSON object".into(),
        ));
    };
    let api_version = resource.api_version();
    let sent_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or(&api_version);
    let sent_kind = map
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or(resource.kind);
    if resources::by_kind(sent_version, sent_kind).is_none_or(|r| r.bucket != resource.bucket) {
        return Err(ApiError::BadRequest(format!(
            "the API version in the data ({sent_version}) does not match the expected API version ({api_version})"
        )));
    }
    map.remove("apiVersion");
    map.remove("kind");
    Ok(resource.rules.to_storage(body))
}

/// Requires the body's namespace, when set, to match the URL's, then sets it.
fn place_in_namespace(
    resource: &ResourceType,
    object: &mut Value,
    namespace: Option<&str>,
) -> Result<(), ApiError> {
    let meta = metadata_mut(object);
    if !resource.namespaced {
        meta.remove("namespace");
        return Ok(());
    }
    let url_ns = namespace.unwrap_or_default();
    let body_ns = meta
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !body_ns.is_empty() && body_ns != url_ns {
        return Err(ApiError::BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request"
                .into(),
        ));
    }
    meta.insert("namespace".into(), json!(url_ns));
    Ok(())
}

fn check_namespace_open(
    state: &State,
    resource: &ResourceType,
    namespace: Option<&str>,
) -> Result<(), ApiError> {
    if !resource.namespaced {
        return Ok(());
    }
    let ns = namespace.unwrap_or_default();
    let namespaces = resources::find("", "v1", "namespaces").expect("namespaces are always served");
    match state
        .bucket("namespaces")
        .and_then(|b| b.get(&(String::new(), ns.to_string())))
    {
        None => Err(ApiError::NotFound(object_ref(namespaces, ns))),
        Some(found) if object::is_deleting(found) => Err(ApiError::Forbidden(format!(
            "unable to create new content in namespace {ns} because it is being terminated"
        ))),
        Some(_) => Ok(()),
    }
}

impl Store {
    /// Creates an object from a request body of `resource`'s version.
    pub fn create(
        &self,
        resource: &'static ResourceType,
        namespace: Option<&str>,
        body: Value,
        dry_run: bool,
    ) -> Result<Written, ApiError> {
        let mut object = to_storage(resource, body)?;
        place_in_namespace(resource, &mut object, namespace)?;
        let mut state = self.lock();
        check_namespace_open(&state, resource, namespace)?;
        let name = self.choose_name(&state, resource, namespace, &object)?;
        let meta = metadata_mut(&mut object);
        meta.insert("name".into(), json!(name));
        meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta.insert("creationTimestamp".into(), json!(object::now_timestamp()));
        for field in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "resourceVersion",
            "generation",
        ] {
            meta.remove(field);
        }
        if resource.has_status {
            meta.insert("generation".into(), json!(1));
        }
        if !resource.rules.keeps_status_on_create()
            && let Some(map) = object.as_object_mut()
        {
            map.remove("status");
        }
        let key = key(resource, namespace, &name);
        let mut errors = crate::rules::check_labels_and_annotations(&object);
        if let Err(rule_errors) = resource.rules.prepare_create(
            &mut object,
            &Peers::new(state.bucket_mut(resource.bucket), None),
        ) {
            errors.extend(rule_errors);
        }
        if !errors.is_empty() {
            return Err(invalid(resource, &name, errors));
        }
        if state.bucket_mut(resource.bucket).contains_key(&key) {
            return Err(ApiError::AlreadyExists(object_ref(resource, &name)));
        }
        if dry_run {
            return Ok(Written {
                object: to_wire(resource, &object),
                created: true,
            });
        }
        let revision = state.next_revision();
        set_revision(&mut object, revision);
        state
            .bucket_mut(resource.bucket)
            .insert(key, object.clone());
        let wire = to_wire(resource, &object);
        self.publish(
            &mut state,
            Change {
                revision,
                bucket: resource.bucket,
                kind: ChangeKind::Added,
                object,
                previous: None,
            },
        );
        Ok(Written {
            object: wire,
            created: true,
        })
    }

    /// Puts an object back as a backup holds it: its uid, finalizers and
    /// status kept, an object of that name replaced.
    pub fn restore(
        &self,
        resource: &'static ResourceType,
        namespace: Option<&str>,
        body: Value,
    ) -> Result<Value, ApiError> {
        let mut object = to_storage(resource, body)?;
        place_in_namespace(resource, &mut object, namespace)?;
        let name = object::name(&object).to_string();
        if name.is_empty() || object::uid(&object).is_none() {
            return Err(ApiError::BadRequest(format!(
                "a restored {} needs metadata.name and metadata.uid",
                resource.kind
            )));
        }
        let key = key(resource, namespace, &name);
        let mut state = self.lock();
        let revision = state.next_revision();
        set_revision(&mut object, revision);
        let previous = state
            .bucket_mut(resource.bucket)
            .insert(key, object.clone());
        let wire = to_wire(resource, &object);
        let kind = match previous {
            Some(_) => ChangeKind::Modified,
            None => ChangeKind::Added,
        };
        self.publish(
            &mut state,
            Change {
                revision,
                bucket: resource.bucket,
                kind,
                object,
                previous,
            },
        );
        Ok(wire)
    }

    fn choose_name(
        &self,
        state: &State,
        resource: &ResourceType,
        namespace: Option<&str>,
        object: &Value,
    ) -> Result<String, ApiError> {
        let name = object::name(object);
        if !name.is_empty() {
            resource.rules.name_rule().check(name).map_err(|detail| {
                invalid(
                    resource,
                    name,
                    vec![FieldError::invalid(
                        "metadata.name",
                        format!("\"{name}\""),
                        &detail,
                    )],
                )
            })?;
            return Ok(name.to_string());
        }
        let prefix = object::str_at(object, "metadata.generateName").unwrap_or_default();
        if prefix.is_empty() {
            return Err(invalid(
                resource,
                "",
                vec![
                    FieldError::required("metadata.name")
                        .with_detail("name or generateName is required"),
                ],
            ));
        }
        let existing = state.bucket(resource.bucket);
        let taken = |candidate: &str| {
            existing.is_some_and(|b| b.contains_key(&key(resource, namespace, candidate)))
        };
        let candidate = std::iter::repeat_with(|| format!("{prefix}{}", random_suffix()))
            .take(16)
            .find(|candidate| !taken(candidate))
            .ok_or_else(|| ApiError::AlreadyExists(object_ref(resource, prefix)))?;
        resource
            .rules
            .name_rule()
            .check(&candidate)
            .map_err(|detail| {
                invalid(
                    resource,
                    &candidate,
                    vec![FieldError::invalid(
                        "metadata.generateName",
                        format!("\"{prefix}\""),
                        &detail,
                    )],
                )
            })?;
        Ok(candidate)
    }

    /// Replaces an object (PUT) through the main resource or `/status`.
    pub fn update(
        &self,
        resource: &'static ResourceType,
        namespace: Option<&str>,
        name: &str,
        endpoint: Endpoint,
        body: Value,
        dry_run: bool,
    ) -> Result<Written, ApiError> {
        let mut state = self.lock();
        let key = key(resource, namespace, name);
        let old = state
            .bucket(resource.bucket)
            .and_then(|b| b.get(&key))
            .cloned()
            .ok_or_else(|| ApiError::NotFound(object_ref(resource, name)))?;
        self.replace_locked(&mut state, resource, key, &old, body, endpoint, dry_run)
    }

    /// Applies a patch through the main resource or `/status`.
    #[allow(clippy::too_many_arguments)]
    pub fn patch(
        &self,
        resource: &'static ResourceType,
        namespace: Option<&str>,
        name: &str,
        endpoint: Endpoint,
        kind: PatchKind,
        patch_body: &Value,
        dry_run: bool,
    ) -> Result<Written, ApiError> {
        let mut state = self.lock();
        let key = key(resource, namespace, name);
        let old = state
            .bucket(resource.bucket)
            .and_then(|b| b.get(&key))
            .cloned();
        let Some(old) = old else {
            if kind == PatchKind::Apply && endpoint == Endpoint::Main {
                drop(state);
                let mut body = patch_body.clone();
                metadata_mut(&mut body).insert("name".into(), json!(name));
                return self.create(resource, namespace, body, dry_run);
            }
            return Err(ApiError::NotFound(object_ref(resource, name)));
        };
        let patched = patch::apply(kind, resource, &to_wire(resource, &old), patch_body)?;
        self.replace_locked(&mut state, resource, key, &old, patched, endpoint, dry_run)
    }

    /// The shared update path: preconditions, subresource separation, system
    /// metadata, finalizer rules, per-kind rules, then commit or delete.
    #[allow(clippy::too_many_arguments)]
    fn replace_locked(
        &self,
        state: &mut State,
        resource: &'static ResourceType,
        key: ObjectKey,
        old: &Value,
        body: Value,
        endpoint: Endpoint,
        dry_run: bool,
    ) -> Result<Written, ApiError> {
        let name = key.1.clone();
        let mut new = to_storage(resource, body)?;
        let body_name = object::name(&new);
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        place_in_namespace(
            resource,
            &mut new,
            (!key.0.is_empty()).then_some(key.0.as_str()),
        )?;
        check_preconditions(resource, old, &new)?;
        separate_status(resource, old, &mut new, endpoint);
        keep_system_metadata(old, &mut new, &name);
        let mut errors = crate::rules::check_labels_and_annotations(&new);
        errors.extend(check_new_finalizers(old, &new));
        if let Err(rule_errors) = resource.rules.prepare_update(
            old,
            &mut new,
            endpoint,
            &Peers::new(state.bucket_mut(resource.bucket), Some(&key)),
        ) {
            errors.extend(rule_errors);
        }
        if !errors.is_empty() {
            return Err(invalid(resource, &name, errors));
        }
        if resource.has_status
            && object::without_meta_and_status(old) != object::without_meta_and_status(&new)
        {
            let generation = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            metadata_mut(&mut new).insert("generation".into(), json!(generation + 1));
        }
        let finalized = object::is_deleting(&new) && object::finalizers(&new).is_empty();
        if dry_run {
            return Ok(Written {
                object: to_wire(resource, &new),
                created: false,
            });
        }
        if finalized {
            // The real server does not persist the emptying update: it deletes the
            // object as it was, so watchers see one DELETED event.
            return Ok(Written {
                object: self.remove_locked(state, resource, &key),
                created: false,
            });
        }
        set_revision(
            &mut new,
            object::resource_version(old)
                .and_then(|rv| rv.parse().ok())
                .unwrap_or(0),
        );
        if object::without_resource_version(&new) == object::without_resource_version(old) {
            // A no-op write changes nothing, not even the resourceVersion.
            return Ok(Written {
                object: to_wire(resource, old),
                created: false,
            });
        }
        let revision = state.next_revision();
        set_revision(&mut new, revision);
        state.bucket_mut(resource.bucket).insert(key, new.clone());
        let wire = to_wire(resource, &new);
        self.publish(
            state,
            Change {
                revision,
                bucket: resource.bucket,
                kind: ChangeKind::Modified,
                object: new,
                previous: Some(old.clone()),
            },
        );
        Ok(Written {
            object: wire,
            created: false,
        })
    }
}

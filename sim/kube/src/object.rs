//! Accessors for Kubernetes objects held as JSON values.

use serde_json::{Map, Value};

/// The value at a dotted path such as `metadata.name` or `involvedObject.kind`.
pub fn get_path<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(object, |value, key| value.get(key))
}

/// The string at a dotted path, if present and a string.
pub fn str_at<'a>(object: &'a Value, path: &str) -> Option<&'a str> {
    get_path(object, path).and_then(Value::as_str)
}

/// The map at `key` inside `object`, created (replacing any non-map) when missing.
pub fn map_entry<'a>(object: &'a mut Value, key: &str) -> &'a mut Map<String, Value> {
    if !object.is_object() {
        *object = Value::Object(Map::new());
    }
    let Value::Object(map) = object else {
        unreachable!("object was just made a map")
    };
    let entry = map
        .entry(key.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    match entry {
        Value::Object(inner) => inner,
        _ => unreachable!("entry was just made a map"),
    }
}

pub fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    map_entry(object, "metadata")
}

pub fn name(object: &Value) -> &str {
    str_at(object, "metadata.name").unwrap_or_default()
}

pub fn namespace(object: &Value) -> Option<&str> {
    str_at(object, "metadata.namespace").filter(|ns| !ns.is_empty())
}

pub fn resource_version(object: &Value) -> Option<&str> {
    str_at(object, "metadata.resourceVersion").filter(|rv| !rv.is_empty())
}

pub fn uid(object: &Value) -> Option<&str> {
    str_at(object, "metadata.uid").filter(|uid| !uid.is_empty())
}

pub fn finalizers(object: &Value) -> Vec<&str> {
    get_path(object, "metadata.finalizers")
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

pub fn is_deleting(object: &Value) -> bool {
    get_path(object, "metadata.deletionTimestamp").is_some_and(|t| !t.is_null())
}

/// Labels as string pairs; non-string values are ignored.
pub fn labels(object: &Value) -> Vec<(&str, &str)> {
    get_path(object, "metadata.labels")
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
                .collect()
        })
        .unwrap_or_default()
}

/// The current time in the RFC 3339 second-precision form of `metav1.Time`.
pub fn now_timestamp() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The object without `metadata` and `status`: what a spec change is judged on.
pub fn without_meta_and_status(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(map) = copy.as_object_mut() {
        map.remove("metadata");
        map.remove("status");
    }
    copy
}

/// The object without its resourceVersion, to tell a no-op write from a real one.
pub fn without_resource_version(object: &Value) -> Value {
    let mut copy = object.clone();
    if let Some(meta) = copy.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    copy
}

/// Identifies a stored object within its kind: (namespace, or "" when cluster-scoped; name).
pub type ObjectKey = (String, String);

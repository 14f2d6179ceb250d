//! Strategic merge patch, for the list strategies kubesim knows per kind.
//!
//! Supported directives: `null` deletes a key, `$patch: replace|delete` on maps and
//! list elements, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>` and
//! `$retainKeys`.

use crate::error::ApiError;
use crate::resources::{ListMerge, ResourceType};
use serde_json::{Map, Value};

const DELETE_FROM: &str = "$deleteFromPrimitiveList/";
const SET_ORDER: &str = "$setElementOrder/";
const RETAIN_KEYS: &str = "$retainKeys";
const PATCH: &str = "$patch";

/// Strategies that apply to every kind through `metadata`.
const METADATA_MERGES: [(&str, ListMerge); 2] = [
    ("metadata.finalizers", ListMerge::Set),
    ("metadata.ownerReferences", ListMerge::Key("uid")),
];

struct Schema<'a> {
    resource: &'a ResourceType,
}

impl Schema<'_> {
    fn list_merge(&self, path: &str) -> Option<ListMerge> {
        METADATA_MERGES
            .iter()
            .chain(self.resource.list_merges)
            .find(|(p, _)| *p == path)
            .map(|(_, strategy)| *strategy)
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Applies a strategic merge `patch` to `object`.
pub fn strategic_merge(
    resource: &ResourceType,
    object: &Value,
    patch: &Value,
) -> Result<Value, ApiError> {
    let Value::Object(patch) = patch else {
        return Err(ApiError::BadRequest(
            "a strategic merge patch must be a JSON object".into(),
        ));
    };
    let mut merged = match object {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    merge_map(&Schema { resource }, &mut merged, patch, "")?;
    Ok(Value::Object(merged))
}

fn merge_map(
    schema: &Schema,
    target: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    path: &str,
) -> Result<(), ApiError> {
    match patch.get(PATCH).and_then(Value::as_str) {
        Some("replace") => {
            *target = without_directives(patch);
            return Ok(());
        }
        Some("delete") => {
            target.clear();
            return Ok(());
        }
        Some(other) => {
            return Err(ApiError::BadRequest(format!(
                "unknown patch type: {other} in map"
            )));
        }
        None => {}
    }
    let mut orders = Vec::new();
    for (key, value) in patch {
        if let Some(field) = key.strip_prefix(DELETE_FROM) {
            remove_primitives(target, field, value);
        } else if let Some(field) = key.strip_prefix(SET_ORDER) {
            orders.push((field, value));
        } else if key == RETAIN_KEYS || key == PATCH {
            continue;
        } else {
            merge_field(schema, target, key, value, &child(path, key))?;
        }
    }
    for (field, order) in orders {
        apply_order(schema, target, field, order, &child(path, field));
    }
    if let Some(keep) = patch.get(RETAIN_KEYS).and_then(Value::as_array) {
        target.retain(|key, _| keep.iter().any(|k| k.as_str() == Some(key)));
    }
    Ok(())
}

fn merge_field(
    schema: &Schema,
    target: &mut Map<String, Value>,
    key: &str,
    value: &Value,
    path: &str,
) -> Result<(), ApiError> {
    match value {
        Value::Null => {
            target.remove(key);
        }
        Value::Object(patch_map) => {
            let entry = target
                .entry(key.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            if let Value::Object(existing) = entry {
                merge_map(schema, existing, patch_map, path)?;
            }
        }
        Value::Array(items) => {
            let merged = match (schema.list_merge(path), target.get(key)) {
                (Some(strategy), Some(Value::Array(existing))) => {
                    merge_list(schema, existing, items, strategy, path)?
                }
                _ => replace_list(schema, items, path)?,
            };
            target.insert(key.to_string(), Value::Array(merged));
        }
        scalar => {
            target.insert(key.to_string(), scalar.clone());
        }
    }
    Ok(())
}

/// A list that replaces the stored one: directives are dropped from its maps.
fn replace_list(schema: &Schema, items: &[Value], path: &str) -> Result<Vec<Value>, ApiError> {
    items
        .iter()
        .filter(|item| !is_directive_only(item))
        .map(|item| match item {
            Value::Object(map) => {
                let mut fresh = Map::new();
                merge_map(schema, &mut fresh, map, path)?;
                Ok(Value::Object(fresh))
            }
            other => Ok(other.clone()),
        })
        .collect()
}

fn is_directive_only(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|m| m.len() == 1 && m.contains_key(PATCH))
}

fn merge_list(
    schema: &Schema,
    existing: &[Value],
    items: &[Value],
    strategy: ListMerge,
    path: &str,
) -> Result<Vec<Value>, ApiError> {
    let replace_all = items
        .iter()
        .any(|i| is_directive_only(i) && i[PATCH] == "replace");
    if replace_all {
        return replace_list(schema, items, path);
    }
    let mut merged = existing.to_vec();
    match strategy {
        ListMerge::Set => {
            for item in items.iter().filter(|i| !is_directive_only(i)) {
                if !merged.contains(item) {
                    merged.push(item.clone());
                }
            }
        }
        ListMerge::Key(merge_key) => {
            for item in items {
                let Value::Object(patch_item) = item else {
                    return Err(ApiError::BadRequest(format!(
                        "{path}: list elements must be maps with the merge key \"{merge_key}\""
                    )));
                };
                let key_value = patch_item.get(merge_key).ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "map: {item} does not contain declared merge key: {merge_key}"
                    ))
                })?;
                let position = merged
                    .iter()
                    .position(|e| e.get(merge_key) == Some(key_value));
                if patch_item.get(PATCH).and_then(Value::as_str) == Some("delete") {
                    merged.retain(|e| e.get(merge_key) != Some(key_value));
                    continue;
                }
                match position.map(|i| &mut merged[i]) {
                    Some(Value::Object(target)) => merge_map(schema, target, patch_item, path)?,
                    _ => {
                        let mut fresh = Map::new();
                        merge_map(schema, &mut fresh, patch_item, path)?;
                        merged.push(Value::Object(fresh));
                    }
                }
            }
        }
    }
    Ok(merged)
}

fn remove_primitives(target: &mut Map<String, Value>, field: &str, values: &Value) {
    let Some(remove) = values.as_array() else {
        return;
    };
    if let Some(Value::Array(list)) = target.get_mut(field) {
        list.retain(|item| !remove.contains(item));
        if list.is_empty() {
            target.remove(field);
        }
    }
}

/// Reorders a merged list to follow `$setElementOrder`; unlisted items go last.
fn apply_order(
    schema: &Schema,
    target: &mut Map<String, Value>,
    field: &str,
    order: &Value,
    path: &str,
) {
    let (Some(order), Some(Value::Array(list))) = (order.as_array(), target.get_mut(field)) else {
        return;
    };
    let rank = |item: &Value| {
        let found = match schema.list_merge(path) {
            Some(ListMerge::Key(key)) => order.iter().position(|o| o.get(key) == item.get(key)),
            _ => order.iter().position(|o| o == item),
        };
        found.unwrap_or(order.len())
    };
    list.sort_by_key(|item| rank(item));
}

fn without_directives(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !k.starts_with('$'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::find;
    use serde_json::json;

    fn merge(plural: &str, object: Value, patch: Value) -> Value {
        strategic_merge(find("", "v1", plural).unwrap(), &object, &patch).unwrap()
    }

    #[test]
    fn finalizers_merge_as_a_set_and_delete_from_primitive_list() {
        let object = json!({"metadata": {"finalizers": ["a", "b"]}});
        let added = merge(
            "services",
            object.clone(),
            json!({"metadata": {"finalizers": ["c", "a"]}}),
        );
        assert_eq!(added["metadata"]["finalizers"], json!(["a", "b", "c"]));
        let removed = merge(
            "services",
            object,
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(removed["metadata"]["finalizers"], json!(["b"]));
    }

    #[test]
    fn conditions_merge_by_type_and_ingress_is_replaced() {
        let node = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"}, {"type": "DiskPressure", "status": "False"}
        ]}});
        let patched = merge(
            "nodes",
            node,
            json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
        );
        assert_eq!(
            patched["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}, {"type": "DiskPressure", "status": "False"}])
        );
        let svc = json!({"status": {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}]}}});
        let patched = merge(
            "services",
            svc,
            json!({"status": {"loadBalancer": {"ingress": [{"ip": "2.2.2.2"}]}}}),
        );
        assert_eq!(
            patched["status"]["loadBalancer"]["ingress"],
            json!([{"ip": "2.2.2.2"}])
        );
    }

    #[test]
    fn delete_directive_and_element_order() {
        let svc = json!({"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}});
        let patched = merge(
            "services",
            svc.clone(),
            json!({"spec": {"ports": [{"port": 80, "$patch": "delete"}]}}),
        );
        assert_eq!(
            patched["spec"]["ports"],
            json!([{"port": 443, "name": "https"}])
        );
        let reordered = merge(
            "services",
            svc,
            json!({"spec": {"$setElementOrder/ports": [{"port": 443}, {"port": 80}]}}),
        );
        assert_eq!(reordered["spec"]["ports"][0]["port"], 443);
    }
}

//! Rebuilds `requests.json`, the extract of the CloudAPI spec vcdsim
//! enforces at run time, from the full spec, and fails when the committed
//! file differs. `VCDSIM_REGENERATE_EXTRACT=1` rewrites it instead.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{EXTRACT, Spec, segments};

/// The CloudAPI operations vcdsim routes that take a body (see
/// `api/*.rs`). The virtual services' `httpPolicy` rules and the health
/// monitor operations (API 39.0) are not in the 37.2 spec, so they are not
/// here (`UNPUBLISHED_AFTER_37_2`); the session logins take no body.
pub(crate) const ROUTED: &[(&str, &str)] = &[
    ("POST", "/cloudapi/1.0.0/loadBalancer/pools"),
    ("PUT", "/cloudapi/1.0.0/loadBalancer/pools/{id}"),
    ("POST", "/cloudapi/1.0.0/loadBalancer/virtualServices"),
    ("PUT", "/cloudapi/1.0.0/loadBalancer/virtualServices/{id}"),
    ("POST", "/cloudapi/1.0.0/ssl/certificateLibrary"),
    ("PUT", "/cloudapi/1.0.0/ssl/certificateLibrary/{id}"),
    ("PUT", "/cloudapi/1.0.0/entities/{id}"),
    ("POST", "/cloudapi/1.0.0/entityTypes/{type_id}"),
    ("PUT", "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules"),
    (
        "PUT",
        "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules/{rule}",
    ),
    ("POST", "/cloudapi/1.0.0/firewallGroups"),
    ("PUT", "/cloudapi/1.0.0/firewallGroups/{id}"),
    ("PUT", "/cloudapi/1.0.0/edgeGateways/{id}/loadBalancer"),
    ("POST", "/cloudapi/1.0.0/ipSpaces/{id}/allocate"),
    (
        "PUT",
        "/cloudapi/1.0.0/ipSpaces/{id}/allocations/{allocation}",
    ),
    ("POST", "/cloudapi/1.0.0/edgeGateways/{id}/nat/rules"),
    ("PUT", "/cloudapi/1.0.0/edgeGateways/{id}/nat/rules/{rule}"),
    ("POST", "/cloudapi/1.0.0/applicationPortProfiles"),
    ("PUT", "/cloudapi/1.0.0/applicationPortProfiles/{id}"),
];

/// A schema without what validation does not read: `description`,
/// `example` and the `x-vcloud-*` annotations. Property names are kept
/// (a property may be called `description`); `default` and `enum` values
/// are data, copied as they are.
fn strip(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    let mut kept = Map::new();
    for (key, value) in object {
        if key == "description" || key == "example" || key.starts_with("x-vcloud-") {
            continue;
        }
        let value = match key.as_str() {
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, property)| (name.clone(), strip(property)))
                    .collect(),
            ),
            "allOf" => Value::Array(value.as_array().into_iter().flatten().map(strip).collect()),
            "items" | "additionalProperties" => strip(value),
            _ => value.clone(),
        };
        kept.insert(key.clone(), value);
    }
    Value::Object(kept)
}

/// The names of the definitions `value` refers to.
fn references(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                into.push(target.rsplit('/').next().unwrap_or(target).to_string());
            }
            map.values().for_each(|v| references(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| references(v, into)),
        _ => {}
    }
}

/// The extract of the full spec `document`: the body parameter of each
/// [`ROUTED`] operation and every definition reachable from them.
pub(crate) fn build(document: &Value) -> Value {
    let base = document["basePath"].as_str().unwrap_or("/cloudapi");
    let mut paths: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    let mut pending = Vec::new();
    for (method, template) in ROUTED {
        let wanted = segments(template.strip_prefix(base).expect("a CloudAPI route"));
        let (path, item) = document["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .find(|(path, _)| segments(path) == wanted)
            .unwrap_or_else(|| panic!("the spec has no path for {template}"));
        let operation = &item[method.to_ascii_lowercase()];
        let body = operation["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["in"] == "body")
            .unwrap_or_else(|| panic!("{method} {template} takes no body in the spec"));
        let schema = strip(&body["schema"]);
        references(&schema, &mut pending);
        let parameter = json!({"in": "body", "name": body["name"], "required": body["required"], "schema": schema});
        paths.entry(path.clone()).or_default().insert(
            method.to_ascii_lowercase(),
            json!({"parameters": [parameter]}),
        );
    }
    let mut definitions = BTreeMap::new();
    while let Some(name) = pending.pop() {
        if definitions.contains_key(&name) {
            continue;
        }
        let definition = strip(&document["definitions"][&name]);
        references(&definition, &mut pending);
        definitions.insert(name, definition);
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "vcdsim's extract of the VMware Cloud Director OpenAPI", "version": document["info"]["version"]},
        "basePath": base,
        "paths": paths,
        "definitions": definitions,
    })
}

#[test]
fn the_vendored_extract_is_the_spec_s() {
    let path = Spec::default_path();
    if !path.exists() {
        eprintln!("SKIPPED: the CloudAPI spec is absent at {}", path.display());
        return;
    }
    let document = Spec::read_document(&path).unwrap_or_else(|e| panic!("{e}"));
    let text = serde_json::to_string_pretty(&build(&document)).expect("JSON") + "\n";
    if text == EXTRACT {
        return;
    }
    let target = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/openapi/requests.json");
    if std::env::var_os("VCDSIM_REGENERATE_EXTRACT").is_some_and(|v| v == "1") {
        std::fs::write(&target, text).expect("requests.json is written");
        eprintln!("rewrote {}: rebuild to embed it", target.display());
        return;
    }
    panic!(
        "{} differs from the extract of {}: rerun with VCDSIM_REGENERATE_EXTRACT=1 to rewrite it",
        target.display(),
        path.display()
    );
}

#[test]
fn the_extract_covers_every_routed_body() {
    let spec = Spec::embedded();
    for (method, template) in ROUTED {
        assert!(
            spec.body_schema(method, template).is_ok(),
            "{method} {template} is not in requests.json"
        );
    }
}

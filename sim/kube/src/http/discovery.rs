//! Legacy (non-aggregated) discovery documents and `/version`.

use crate::resources::{self, ResourceType, verbs};
use serde_json::{Value, json};

/// The Kubernetes version kubesim reports, matching the k8s-openapi API level.
pub const MAJOR: &str = "1";
pub const MINOR: &str = "37";

pub fn version() -> Value {
    json!({
        "major": MAJOR,
        "minor": MINOR,
        "gitVersion": format!("v{MAJOR}.{MINOR}.0-kubesim"),
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "go1.25",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

pub fn group(group: &str) -> Value {
    let mut versions: Vec<&str> = resources::RESOURCES
        .iter()
        .filter(|r| r.group == group)
        .map(|r| r.version)
        .collect();
    versions.dedup();
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

pub fn groups() -> Value {
    let groups: Vec<Value> = resources::groups()
        .into_iter()
        .map(|g| {
            let mut doc = group(g);
            if let Some(map) = doc.as_object_mut() {
                map.remove("kind");
                map.remove("apiVersion");
            }
            doc
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn resource_entry(resource: &ResourceType) -> Value {
    let mut entry = json!({
        "name": resource.plural,
        "singularName": resource.singular,
        "namespaced": resource.namespaced,
        "kind": resource.kind,
        "verbs": verbs(resource),
    });
    if !resource.short_names.is_empty() {
        entry["shortNames"] = json!(resource.short_names);
    }
    if !resource.categories.is_empty() {
        entry["categories"] = json!(resource.categories);
    }
    entry
}

pub fn resource_list(group: &str, version: &str) -> Value {
    let mut entries = Vec::new();
    for resource in resources::in_group_version(group, version) {
        entries.push(resource_entry(resource));
        if resource.has_status {
            entries.push(json!({
                "name": format!("{}/status", resource.plural),
                "singularName": "",
                "namespaced": resource.namespaced,
                "kind": resource.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": entries,
    })
}

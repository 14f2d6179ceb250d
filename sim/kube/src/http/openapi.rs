//! Just enough OpenAPI v3 for kubectl: per group/version documents whose write
//! operations name their kind and accept `fieldValidation`, so kubectl leaves
//! validation to the server instead of downloading full schemas.

use crate::resources::{self, ResourceType};
use serde_json::{Map, Value, json};

fn document_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: where each group/version's document is.
pub fn root() -> Value {
    let mut paths = Map::new();
    for resource in resources::RESOURCES.iter() {
        let path = document_path(resource.group, resource.version);
        paths.insert(
            path.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash=kubesim")}),
        );
    }
    json!({"paths": paths})
}

fn operation(resource: &ResourceType, action: &str) -> Value {
    json!({
        "operationId": format!("{action}{}", resource.kind),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": resource.group, "version": resource.version, "kind": resource.kind
        },
        "parameters": [
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": true}},
        ],
        "responses": {"200": {"description": "OK"}},
    })
}

/// `/openapi/v3/{api/v1 | apis/group/version}`, or `None` for unknown paths.
pub fn group_version(path: &str) -> Option<Value> {
    let mut served = resources::RESOURCES
        .iter()
        .filter(|r| document_path(r.group, r.version) == path)
        .peekable();
    served.peek()?;
    let mut paths = Map::new();
    for resource in served {
        let prefix = format!("/{path}");
        let collection = if resource.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", resource.plural)
        } else {
            format!("{prefix}/{}", resource.plural)
        };
        paths.insert(
            collection.clone(),
            json!({"post": operation(resource, "post")}),
        );
        paths.insert(
            format!("{collection}/{{name}}"),
            json!({"put": operation(resource, "put"), "patch": operation(resource, "patch")}),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (kubesim)", "version": format!("v{}.{}", super::discovery::MAJOR, super::discovery::MINOR)},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}

//! Server-side printing: objects as a `meta.k8s.io` `Table`, with the columns the real
//! API server prints for each kind (k8s.io/kubernetes `pkg/printers/internalversion`).
//!
//! As on the real server every column is generated, including the `priority: 1` ones
//! that only `kubectl get -o wide` shows.

mod age;
mod event;
mod node;
mod service;
mod simple;

use crate::object;
use crate::resources::ResourceType;
use jiff::Timestamp;
use serde_json::{Map, Value, json};

/// Printed when a cell has nothing to show.
const NONE: &str = "<none>";

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const CREATION_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.";

/// One `TableColumnDefinition`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    name: &'static str,
    type_name: &'static str,
    format: &'static str,
    description: &'static str,
    /// 0 for default columns, 1 for those shown only in wide output.
    priority: u8,
}

impl Column {
    const NAME: Column = Column {
        name: "Name",
        type_name: "string",
        format: "name",
        description: NAME_DESCRIPTION,
        priority: 0,
    };
    const AGE: Column = Column::text("Age", CREATION_DESCRIPTION);

    /// A string column shown by default.
    const fn text(name: &'static str, description: &'static str) -> Self {
        Column {
            name,
            type_name: "string",
            format: "",
            description,
            priority: 0,
        }
    }

    /// The same column, shown only in wide output.
    const fn wide(self) -> Self {
        Column {
            priority: 1,
            ..self
        }
    }

    fn to_json(self) -> Value {
        json!({
            "name": self.name,
            "type": self.type_name,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

/// The columns of one kind and how to fill them from an object in storage form.
pub struct Printer {
    columns: &'static [Column],
    cells: fn(&Value, Timestamp) -> Vec<Value>,
}

/// The printer the real server registers for the resource's kind, or its default one.
fn printer_for(resource: &ResourceType) -> &'static Printer {
    match (resource.group, resource.kind) {
        ("", "Service") => &service::SERVICES,
        ("", "Node") => &node::NODES,
        // events.k8s.io/v1 Events are stored and printed as core Events.
        ("" | "events.k8s.io", "Event") => &event::EVENTS,
        ("", "Namespace") => &simple::NAMESPACES,
        ("", "ConfigMap") => &simple::CONFIG_MAPS,
        ("", "Secret") => &simple::SECRETS,
        ("coordination.k8s.io", "Lease") => &simple::LEASES,
        _ => &simple::DEFAULT,
    }
}

/// The `meta.k8s.io` version the client asked the Table in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableVersion {
    V1,
    V1Beta1,
}

impl TableVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1 => "v1",
            Self::V1Beta1 => "v1beta1",
        }
    }

    fn api_version(self) -> String {
        format!("meta.k8s.io/{}", self.as_str())
    }
}

/// What each row carries besides its cells (`TableOptions.includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    None,
    /// A `PartialObjectMetadata`: what kubectl needs for namespaces and sorting.
    #[default]
    Metadata,
    Object,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableOptions {
    pub version: TableVersion,
    pub include_object: IncludeObject,
}

/// A Table of a list's items, with the list's resourceVersion and continue token.
pub fn list_table(
    resource: &ResourceType,
    list: &Value,
    options: TableOptions,
    now: Timestamp,
) -> Value {
    let mut metadata = Map::new();
    for field in ["resourceVersion", "continue", "remainingItemCount"] {
        if let Some(value) = list.pointer(&format!("/metadata/{field}")) {
            metadata.insert(field.into(), value.clone());
        }
    }
    let items = list
        .get("items")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    table(resource, items, metadata, options, true, now)
}

/// A one-row Table of one object. Watches leave out the column definitions after
/// their first event, as the real server does to save bandwidth.
pub fn object_table(
    resource: &ResourceType,
    object: &Value,
    options: TableOptions,
    with_columns: bool,
    now: Timestamp,
) -> Value {
    let mut metadata = Map::new();
    if let Some(revision) = object::resource_version(object) {
        metadata.insert("resourceVersion".into(), json!(revision));
    }
    table(
        resource,
        std::slice::from_ref(object),
        metadata,
        options,
        with_columns,
        now,
    )
}

fn table(
    resource: &ResourceType,
    objects: &[Value],
    metadata: Map<String, Value>,
    options: TableOptions,
    with_columns: bool,
    now: Timestamp,
) -> Value {
    let printer = printer_for(resource);
    let columns: Vec<Value> = if with_columns {
        printer.columns.iter().map(|c| c.to_json()).collect()
    } else {
        Vec::new()
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|wire| row(resource, printer, wire, options, now))
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": options.version.api_version(),
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

fn row(
    resource: &ResourceType,
    printer: &Printer,
    wire: &Value,
    options: TableOptions,
    now: Timestamp,
) -> Value {
    // The real server prints from its internal version, which is kubesim's storage form.
    let stored = resource.rules.to_storage(wire.clone());
    let object = match options.include_object {
        IncludeObject::None => Value::Null,
        IncludeObject::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": options.version.api_version(),
            "metadata": wire.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
        IncludeObject::Object => wire.clone(),
    };
    json!({"cells": (printer.cells)(&stored, now), "object": object})
}

/// The AGE cell: time since `metadata.creationTimestamp`.
fn age_cell(object: &Value, now: Timestamp) -> Value {
    json!(age::since(
        object::str_at(object, "metadata.creationTimestamp"),
        now
    ))
}

/// The strings of the array at a dotted path; other values are skipped.
fn strings<'a>(object: &'a Value, path: &str) -> Vec<&'a str> {
    object::get_path(object, path)
        .and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// How many entries the map at a dotted path has.
fn map_len(object: &Value, path: &str) -> usize {
    object::get_path(object, path)
        .and_then(Value::as_object)
        .map_or(0, Map::len)
}

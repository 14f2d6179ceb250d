//! A validator of JSON bodies against the CloudAPI Swagger 2.0 spec:
//! definitions (`$ref`, `allOf`, required properties, types, enums, item,
//! length and range limits, patterns, arrays and maps) and the request
//! body each operation takes. Strict on properties the spec does not
//! declare; lenient on `null`, which VCD sends for absent optional fields.
//!
//! Two sources: the full spec file ([`Spec::load`], for tests), and the
//! extract of it vendored in this crate ([`Spec::embedded`],
//! `requests.json`: the request bodies of the operations vcdsim routes and
//! the definitions they reach), which vcdsim enforces at run time
//! ([`runtime`]) and which clients' tests can use without the file.
//! [`Violation::all_of`] turns a valid body into one invalid body per
//! constraint it reaches.

mod constraints;
#[cfg(test)]
mod extract;
pub(crate) mod runtime;
mod versions;
mod violations;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use regex::Regex;
use serde_json::{Value, json};

pub use constraints::Constraint;
pub use versions::UNPUBLISHED_AFTER_37_2;
pub use violations::Violation;

/// The vendored extract of the spec (see `extract.rs`, which rebuilds it).
const EXTRACT: &str = include_str!("requests.json");

/// One operation of the spec.
#[derive(Clone)]
struct Operation {
    method: String,
    /// The path under `basePath`, split at `/`, every `{…}` as `{}`.
    segments: Vec<String>,
    /// The schema of the `in: body` parameter, and whether it is required.
    body: Option<(Value, bool)>,
}

/// The spec's definitions and operations, indexed for validation.
#[derive(Clone)]
pub struct Spec {
    definitions: HashMap<String, Value>,
    base_path: String,
    operations: Vec<Operation>,
    /// Every `pattern` of the spec, compiled once; `None` for a pattern
    /// the `regex` crate cannot compile (look-around), which is skipped.
    patterns: Arc<HashMap<String, Option<Regex>>>,
}

/// A path's segments, with every template parameter as `{}` so that
/// `{id}` in a route matches `{poolId}` in the spec.
fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s.starts_with('{') {
                "{}".to_string()
            } else {
                s.to_string()
            }
        })
        .collect()
}

/// Every `pattern` string under `value`.
fn collect_patterns(value: &Value, into: &mut HashMap<String, Option<Regex>>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(pattern)) = map.get("pattern") {
                into.entry(pattern.clone())
                    .or_insert_with(|| Regex::new(pattern).ok());
            }
            map.values().for_each(|v| collect_patterns(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_patterns(v, into)),
        _ => {}
    }
}

impl Spec {
    /// Where the spec is read from: `VCDSIM_OPENAPI`, else the shared copy
    /// beside the repository (`../../../shared/vcd-openapi/cloudapi-37.2.yaml`
    /// from this crate).
    pub fn default_path() -> PathBuf {
        std::env::var_os("VCDSIM_OPENAPI")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../../shared/vcd-openapi/cloudapi-37.2.yaml")
            })
    }

    /// The spec document at `path` (YAML or JSON), unindexed.
    fn read_document(path: &Path) -> Result<Value, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_yaml_ng::from_str(&text)
            .map_err(|e| format!("{} is not valid YAML: {e}", path.display()))
    }

    /// Reads and indexes the spec at `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, String> {
        let path = path.as_ref();
        Self::from_document(&Self::read_document(path)?)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Indexes a spec document already parsed.
    pub fn from_document(spec: &Value) -> Result<Self, String> {
        let definitions = spec["definitions"]
            .as_object()
            .ok_or("the spec has no definitions")?
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut operations = Vec::new();
        for (path, item) in spec["paths"].as_object().into_iter().flatten() {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let body = operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|p| p["in"] == "body")
                    .map(|p| (p["schema"].clone(), p["required"] == true));
                operations.push(Operation {
                    method: method.to_ascii_uppercase(),
                    segments: segments(path),
                    body,
                });
            }
        }
        let mut patterns = HashMap::new();
        collect_patterns(&spec["definitions"], &mut patterns);
        collect_patterns(&spec["paths"], &mut patterns);
        Ok(Self {
            definitions,
            base_path: spec["basePath"].as_str().unwrap_or("/cloudapi").to_string(),
            operations,
            patterns: Arc::new(patterns),
        })
    }

    /// The extract of the spec vendored in this crate (`requests.json`):
    /// the request bodies of the CloudAPI operations vcdsim routes, and
    /// every definition they reach. Parsed once.
    pub fn embedded() -> &'static Spec {
        static EMBEDDED: OnceLock<Spec> = OnceLock::new();
        EMBEDDED.get_or_init(|| {
            let document: Value =
                serde_json::from_str(EXTRACT).expect("requests.json is valid JSON");
            Spec::from_document(&document).expect("requests.json is a spec")
        })
    }

    /// Checks `value` against the definition named `definition` (a response
    /// body, say), adding one line per violation to `errors`, each starting
    /// with `what`.
    pub fn check(&self, definition: &str, value: &Value, what: &str, errors: &mut Vec<String>) {
        let schema = json!({"$ref": format!("#/definitions/{definition}")});
        let mut found = Vec::new();
        self.validate(&schema, value, &mut "$".to_string(), true, &mut found);
        errors.extend(
            found
                .into_iter()
                .map(|e| format!("{what} ({definition}) {e}")),
        );
    }

    /// The constraints `value` breaks as the definition `definition` (the
    /// body of an operation the 37.2 file lacks, say), without properties
    /// it does not define: the typed handlers refuse those.
    pub fn definition_errors(&self, definition: &str, value: &Value) -> Vec<String> {
        let schema = json!({"$ref": format!("#/definitions/{definition}")});
        let mut errors = Vec::new();
        self.validate(&schema, value, &mut "$".to_string(), false, &mut errors);
        errors
    }

    /// The operation `method template` names, where `template` is a route
    /// such as `/cloudapi/1.0.0/loadBalancer/pools/{id}`: any `{…}` matches
    /// any `{…}` of the spec's path under its `basePath`.
    fn operation(&self, method: &str, template: &str) -> Result<&Operation, String> {
        let Some(path) = template.strip_prefix(&self.base_path) else {
            return Err(format!("not under the spec's basePath {}", self.base_path));
        };
        let wanted = segments(path);
        self.operations
            .iter()
            .find(|o| o.method.eq_ignore_ascii_case(method) && o.segments == wanted)
            .ok_or_else(|| "the spec defines no such operation".to_string())
    }

    /// The schema of the body `method template` takes, and whether the
    /// body is required.
    fn body_schema(&self, method: &str, template: &str) -> Result<&(Value, bool), String> {
        self.operation(method, template)?
            .body
            .as_ref()
            .ok_or_else(|| "the operation takes no request body".to_string())
    }

    /// Checks a request body sent to `method template` (see
    /// [`Spec::operation`]) against the body that operation takes. Each
    /// error names the JSON path (`$.healthMonitors[0]`) and what is wrong
    /// there: a property the spec does not define, a wrong type, or the
    /// constraint keyword the value breaks and its bound. An operation the
    /// spec lacks, or one that takes no body, is an error too.
    pub fn check_request(
        &self,
        method: &str,
        template: &str,
        body: &Value,
    ) -> Result<(), Vec<String>> {
        let what = format!("{} {template}", method.to_ascii_uppercase());
        let (schema, required) = self
            .body_schema(method, template)
            .map_err(|e| vec![format!("{what}: {e}")])?;
        if body.is_null() {
            return match required {
                true => Err(vec![format!("{what}: the request body is missing")]),
                false => Ok(()),
            };
        }
        let mut errors = Vec::new();
        self.validate(schema, body, &mut "$".to_string(), true, &mut errors);
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.into_iter().map(|e| format!("{what}: {e}")).collect())
        }
    }

    /// The constraints `body` breaks as the body of `method template`:
    /// types, enums, required properties, item, length and range limits
    /// and patterns, but not properties the spec does not define (vcdsim's
    /// typed handlers refuse those in VCD's words). `None` when the spec
    /// has no such operation or it takes no body.
    pub fn constraint_errors(
        &self,
        method: &str,
        template: &str,
        body: &Value,
    ) -> Option<Vec<String>> {
        let (schema, _) = self.body_schema(method, template).ok()?;
        let mut errors = Vec::new();
        self.validate(schema, body, &mut "$".to_string(), false, &mut errors);
        Some(errors)
    }

    /// The definition a `$ref` names.
    fn reference<'a>(&'a self, schema: &'a Value) -> Option<&'a str> {
        let reference = schema.get("$ref")?.as_str()?;
        Some(
            reference
                .rsplit("#/definitions/")
                .next()
                .unwrap_or(reference),
        )
    }

    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match self.reference(schema) {
            Some(name) => self.resolve(
                self.definitions
                    .get(name)
                    .unwrap_or_else(|| panic!("unknown definition {name}")),
            ),
            None => schema,
        }
    }

    /// Properties (a later one overriding an earlier one of its name) and
    /// required names of an object schema, through allOf.
    fn shape<'a>(
        &'a self,
        schema: &'a Value,
        properties: &mut Vec<(&'a str, &'a Value)>,
        required: &mut Vec<&'a str>,
    ) {
        let schema = self.resolve(schema);
        for part in schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.shape(part, properties, required);
        }
        if let Some(own) = schema.get("properties").and_then(Value::as_object) {
            properties.extend(own.iter().map(|(k, v)| (k.as_str(), v)));
        }
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !required.contains(&name) {
                required.push(name);
            }
        }
    }

    /// `{type: object, properties: {}}` is how the spec writes "any JSON".
    fn is_any(schema: &Value) -> bool {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.is_empty())
    }
}

/// The property `name` of a shape (the last one of that name).
fn property<'a>(properties: &[(&str, &'a Value)], name: &str) -> Option<&'a Value> {
    properties
        .iter()
        .rev()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| *v)
}

#[cfg(test)]
pub(crate) mod tests;

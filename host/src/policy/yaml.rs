//! Reading WIT-spelled documents (suites, `policy eval` inputs) from YAML.
//!
//! YAML is read into a JSON value first: serde_yaml wants `!tag` syntax for
//! enum variants, while suites write variants as `{from-pool: public}` like JSON.

use serde::de::DeserializeOwned;

/// Parses `text`; the error names the field path and the problem.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let value: serde_json::Value = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    from_value(value)
}

/// Converts an already parsed document; the error names the field path and the problem.
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| match e.path().to_string().as_str() {
        "." => e.inner().to_string(),
        path => format!("{path}: {}", e.inner()),
    })
}

/// Renders `value` as YAML in the same spelling `from_str` reads.
pub fn to_string<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .map_err(|e| e.to_string())
        .and_then(|json| serde_yaml_ng::to_string(&json).map_err(|e| e.to_string()))
        .unwrap_or_else(|e| format!("<unprintable: {e}>\n"))
}

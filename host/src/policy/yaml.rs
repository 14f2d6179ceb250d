//! Reading WIT-spelled documents (suites, `policy eval` inputs) from YAML.
//!
//! YAML is read into a JSON value first: serde_yaml wants `!tag` syntax for
//! enum variants, while suites write variants as `{from-pool: public}` like JSON.

use serde::de::DeserializeOwned;

/// Why a document cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    /// The text is not YAML; the message has the line and column.
    #[error("{0}")]
    Syntax(#[source] serde_yaml_ng::Error),
    /// A field has the wrong shape or value.
    #[error("{}{source}", field_prefix(path))]
    Field {
        /// Where, as `ports[0].protocol`; `.` for the document itself.
        path: String,
        /// What is wrong.
        #[source]
        source: serde_json::Error,
    },
}

fn field_prefix(path: &str) -> String {
    match path {
        "." => String::new(),
        path => format!("{path}: "),
    }
}

/// Parses `text`; the error names the field path and the problem.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    let value: serde_json::Value = serde_yaml_ng::from_str(text).map_err(YamlError::Syntax)?;
    from_value(value)
}

/// Converts an already parsed document; the error names the field path and the problem.
pub fn from_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, YamlError> {
    serde_path_to_error::deserialize(value).map_err(|e| YamlError::Field {
        path: e.path().to_string(),
        source: e.into_inner(),
    })
}

/// Renders `value` as YAML in the same spelling `from_str` reads.
pub fn to_string<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .map_err(|e| e.to_string())
        .and_then(|json| serde_yaml_ng::to_string(&json).map_err(|e| e.to_string()))
        .unwrap_or_else(|e| format!("<unprintable: {e}>\n"))
}

//! The four PATCH content types and how each applies to an object.

mod strategic;

pub use strategic::strategic_merge;

use crate::error::ApiError;
use crate::resources::ResourceType;
use serde_json::Value;

/// A PATCH request's kind, chosen by its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    Json,
    Merge,
    Strategic,
    /// Server-side apply, approximated as a strategic merge that may create.
    Apply,
}

const SUPPORTED: &str = "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml";

impl PatchKind {
    pub fn from_content_type(content_type: &str) -> Result<Self, ApiError> {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        match media {
            "application/json-patch+json" => Ok(Self::Json),
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/strategic-merge-patch+json" => Ok(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+json" => Ok(Self::Apply),
            _ => Err(ApiError::UnsupportedMediaType(SUPPORTED.into())),
        }
    }

    /// Parses the body; apply patches may be YAML.
    pub fn parse_body(self, body: &[u8]) -> Result<Value, ApiError> {
        let parsed = serde_json::from_slice(body).map_err(|e| e.to_string());
        match (self, parsed) {
            (_, Ok(value)) => Ok(value),
            (Self::Apply, Err(_)) => serde_yaml_ng::from_slice(body)
                .map_err(|e| ApiError::BadRequest(format!("error decoding YAML: {e}"))),
            (_, Err(e)) => Err(ApiError::BadRequest(format!("error decoding patch: {e}"))),
        }
    }
}

/// Applies `patch` to `object` (both in the resource's served form).
pub fn apply(
    kind: PatchKind,
    resource: &ResourceType,
    object: &Value,
    patch: &Value,
) -> Result<Value, ApiError> {
    match kind {
        PatchKind::Json => {
            let operations: json_patch::Patch = serde_json::from_value(patch.clone())
                .map_err(|e| ApiError::BadRequest(format!("error decoding JSON patch: {e}")))?;
            let mut patched = object.clone();
            json_patch::patch(&mut patched, &operations)
                .map_err(|e| ApiError::PatchFailed(e.to_string()))?;
            Ok(patched)
        }
        PatchKind::Merge => {
            if !patch.is_object() {
                return Err(ApiError::BadRequest(
                    "a merge patch must be a JSON object".into(),
                ));
            }
            let mut patched = object.clone();
            json_patch::merge(&mut patched, patch);
            Ok(patched)
        }
        PatchKind::Strategic | PatchKind::Apply => strategic_merge(resource, object, patch),
    }
}

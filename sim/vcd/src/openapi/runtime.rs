//! vcdsim holds request bodies to the spec's constraints as VCD does:
//! before a handler runs, a CloudAPI body is checked against the vendored
//! extract ([`Spec::embedded_at`] the negotiated version) and one that
//! breaks a constraint (type, enum, required, item, length or range
//! limit, pattern) is refused with 400 naming each field and constraint.
//! Properties the spec does not define are left to the typed handlers,
//! which refuse them in VCD's words.

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use serde_json::Value;

use super::Spec;
use crate::error::ApiError;
use crate::state::AppState;
use crate::{auth, context};

const BODY_LIMIT: usize = 16 * 1024 * 1024;

/// At most this many characters of violations are quoted in a refusal.
const MESSAGE_LIMIT: usize = 1024;

/// The refusal of a body of `method template` that breaks the spec's
/// constraints at API `version`; `None` for a body that keeps them, one
/// that is not JSON (the handler words that) or an operation outside the
/// extract.
pub fn refusal(method: &str, template: &str, version: &str, body: &[u8]) -> Option<ApiError> {
    if body.is_empty() || !template.starts_with("/cloudapi/") {
        return None;
    }
    let value: Value = serde_json::from_slice(body).ok()?;
    let errors = Spec::embedded_at(version).constraint_errors(method, template, &value)?;
    (!errors.is_empty()).then(|| ApiError::bad_request(message(version, &errors)))
}

/// The refusal of a body of an operation the spec file lacks (one a later
/// version adds) that breaks the constraints of the definition it takes
/// at API `version`; `None` for a body that keeps them or is not JSON.
pub fn definition_refusal(definition: &str, version: &str, body: &[u8]) -> Option<ApiError> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let errors = Spec::embedded_at(version).definition_errors(definition, &value);
    (!errors.is_empty()).then(|| ApiError::bad_request(message(version, &errors)))
}

/// The violations joined, cut at [`MESSAGE_LIMIT`] with a count of the rest.
fn message(version: &str, errors: &[String]) -> String {
    let mut text = format!("The request body breaks the constraints of API version {version}: ");
    let start = text.len();
    for (i, error) in errors.iter().enumerate() {
        if i > 0 && text.len() - start + error.len() > MESSAGE_LIMIT {
            text.push_str(&format!("; and {} more", errors.len() - i));
            break;
        }
        if i > 0 {
            text.push_str("; ");
        }
        text.push_str(error);
    }
    text
}

/// Lets `request` through to its handler (its body read and put back),
/// or answers the refusal of a body that breaks a constraint. As in VCD,
/// a caller that is not signed in hears 401 from the handler first.
pub async fn screen(
    state: &AppState,
    request: Request,
    template: &str,
) -> Result<Request, ApiError> {
    let method = request.method().as_str().to_string();
    if !matches!(method.as_str(), "POST" | "PUT" | "PATCH")
        || !template.starts_with("/cloudapi/")
        || auth::resolve(state, request.headers()).is_err()
    {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, BODY_LIMIT).await.unwrap_or_default();
    match refusal(&method, template, &context::current().api_version, &bytes) {
        Some(refused) => Err(refused),
        None => Ok(Request::from_parts(parts, Body::from(bytes))),
    }
}

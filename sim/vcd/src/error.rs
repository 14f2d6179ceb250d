//! API errors and their wire forms: the CloudAPI `Error` body
//! (`{minorErrorCode, message, stackTrace}`) and the legacy JSON error
//! (which adds `majorErrorCode`). Every message starts with `[ <request id> ]`
//! like a real VCD.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::context;

/// An error answered to a client. `minor` is VCD's `minorErrorCode`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {minor}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub minor: String,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, minor: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            minor: minor.to_string(),
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BAD_REQUEST", message)
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "The access token is missing, expired or revoked.",
        )
    }

    /// VCD answers 403 both for "not yours" and "does not exist".
    pub fn forbidden(id: &str) -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "ACCESS_TO_RESOURCE_IS_FORBIDDEN",
            format!("Access to the resource {id} is forbidden or the resource does not exist."),
        )
    }

    pub fn provider_only() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "ACCESS_TO_RESOURCE_IS_FORBIDDEN",
            "This operation is reserved to the system administrator.",
        )
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "RESOURCE_NOT_FOUND",
            format!("{what} not found."),
        )
    }

    /// What VCD answers for a path it does not serve, at the request's
    /// API version.
    pub fn unknown_path() -> Self {
        Self::not_found("The requested resource")
    }

    pub fn duplicate_name(kind: &str, name: &str, scope: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "DUPLICATE_NAME",
            format!("A {kind} with the name {name} already exists in {scope}."),
        )
    }

    pub fn busy(gateway_uuid: &str, operation: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "BUSY_ENTITY",
            format!(
                "The entity Ref: com.vmware.vcloud.entity.gateway:{gateway_uuid} is busy completing an operation {operation}."
            ),
        )
    }

    pub fn precondition_failed() -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "PRECONDITION_FAILED",
            "The entity was modified since it was read: the If-Match ETag does not match.",
        )
    }

    /// The body of a CloudAPI error, with the request id prefixed.
    pub fn cloudapi_body(&self, request_id: &str) -> serde_json::Value {
        json!({
            "minorErrorCode": self.minor,
            "message": format!("[ {request_id} ] {}", self.message),
            "stackTrace": null,
        })
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let ctx = context::current();
        let mut body = self.cloudapi_body(&ctx.request_id);
        let content_type = if ctx.legacy {
            body["majorErrorCode"] = json!(self.status.as_u16());
            format!(
                "application/vnd.vmware.vcloud.error+json;version={}",
                ctx.api_version
            )
        } else {
            format!("application/json;version={}", ctx.api_version)
        };
        (
            self.status,
            [(axum::http::header::CONTENT_TYPE, content_type)],
            body.to_string(),
        )
            .into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

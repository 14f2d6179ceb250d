//! API errors and their `metav1.Status` wire form.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// How a single field failed validation, mirroring `field.ErrorType` in apimachinery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorKind {
    Invalid,
    Required,
    Forbidden,
    Duplicate,
    NotSupported,
}

impl FieldErrorKind {
    fn cause_reason(self) -> &'static str {
        match self {
            Self::Invalid => "FieldValueInvalid",
            Self::Required => "FieldValueRequired",
            Self::Forbidden => "FieldValueForbidden",
            Self::Duplicate => "FieldValueDuplicate",
            Self::NotSupported => "FieldValueNotSupported",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Invalid => "Invalid value",
            Self::Required => "Required value",
            Self::Forbidden => "Forbidden",
            Self::Duplicate => "Duplicate value",
            Self::NotSupported => "Unsupported value",
        }
    }
}

/// One validation failure at a JSON field path such as `spec.ports[0].port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub kind: FieldErrorKind,
    pub detail: String,
}

impl FieldError {
    pub fn invalid(field: impl Into<String>, value: impl std::fmt::Display, detail: &str) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::Invalid,
            detail: format!("{value}: {detail}"),
        }
    }

    pub fn immutable(field: impl Into<String>, value: impl std::fmt::Display) -> Self {
        Self::invalid(field, value, "field is immutable")
    }

    pub fn required(field: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::Required,
            detail: String::new(),
        }
    }

    /// Adds an explanation to an error that has none (such as `required`).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }

    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::Forbidden,
            detail: detail.into(),
        }
    }

    pub fn duplicate(field: impl Into<String>, value: impl std::fmt::Display) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::Duplicate,
            detail: value.to_string(),
        }
    }

    pub fn not_supported(field: impl Into<String>, value: &str, allowed: &[&str]) -> Self {
        let allowed: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
        Self {
            field: field.into(),
            kind: FieldErrorKind::NotSupported,
            detail: format!("\"{value}\": supported values: {}", allowed.join(", ")),
        }
    }

    fn message(&self) -> String {
        if self.detail.is_empty() {
            format!("{}: {}", self.field, self.kind.label())
        } else {
            format!("{}: {}: {}", self.field, self.kind.label(), self.detail)
        }
    }
}

/// Names the object an error is about, as the real server reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRef {
    pub group: String,
    pub kind: String,
    /// The resource (plural) name, e.g. `services`.
    pub resource: String,
    pub name: String,
}

impl ObjectRef {
    /// `services` or `leases.coordination.k8s.io`, the form used in messages.
    fn qualified_resource(&self) -> String {
        if self.group.is_empty() {
            self.resource.clone()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }
}

/// An error the API answers with; each maps to a `metav1.Status` reason and code.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ApiError {
    #[error("{} \"{}\" not found", .0.qualified_resource(), .0.name)]
    NotFound(ObjectRef),
    #[error("{} \"{}\" already exists", .0.qualified_resource(), .0.name)]
    AlreadyExists(ObjectRef),
    #[error("Operation cannot be fulfilled on {} \"{}\": {detail}", .object.qualified_resource(), .object.name)]
    Conflict { object: ObjectRef, detail: String },
    #[error("{} \"{}\" is invalid: {}", .object.kind, .object.name, join_causes(.causes))]
    Invalid {
        object: ObjectRef,
        causes: Vec<FieldError>,
    },
    #[error("too old resource version: {requested} ({oldest})")]
    Expired { requested: u64, oldest: u64 },
    #[error("{0}")]
    BadRequest(String),
    /// A patch that does not apply (a failed JSON-patch `test`, a bad path).
    #[error("{0}")]
    PatchFailed(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("the server does not allow this method on the requested resource")]
    MethodNotAllowed,
    #[error("the server could not find the requested resource")]
    UnknownResource,
    #[error("the body of the request was in an unknown format - accepted media types include: {0}")]
    UnsupportedMediaType(String),
    /// Produced by a fault hook: any code, reason and message a test asks for.
    #[error("{message}")]
    Injected {
        code: u16,
        reason: String,
        message: String,
    },
}

fn join_causes(causes: &[FieldError]) -> String {
    let messages: Vec<String> = causes.iter().map(FieldError::message).collect();
    if messages.len() == 1 {
        messages.join("")
    } else {
        format!("[{}]", messages.join(", "))
    }
}

impl ApiError {
    pub fn invalid(object: ObjectRef, causes: Vec<FieldError>) -> Self {
        Self::Invalid { object, causes }
    }

    pub fn code(&self) -> u16 {
        match self {
            Self::NotFound(_) | Self::UnknownResource => 404,
            Self::AlreadyExists(_) | Self::Conflict { .. } => 409,
            Self::Invalid { .. } | Self::PatchFailed(_) => 422,
            Self::Expired { .. } => 410,
            Self::BadRequest(_) => 400,
            Self::Forbidden(_) => 403,
            Self::MethodNotAllowed => 405,
            Self::UnsupportedMediaType(_) => 415,
            Self::Injected { code, .. } => *code,
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Self::NotFound(_) | Self::UnknownResource => "NotFound",
            Self::AlreadyExists(_) => "AlreadyExists",
            Self::Conflict { .. } => "Conflict",
            Self::Invalid { .. } | Self::PatchFailed(_) => "Invalid",
            Self::Expired { .. } => "Expired",
            Self::BadRequest(_) => "BadRequest",
            Self::Forbidden(_) => "Forbidden",
            Self::MethodNotAllowed => "MethodNotAllowed",
            Self::UnsupportedMediaType(_) => "UnsupportedMediaType",
            Self::Injected { reason, .. } => reason,
        }
    }

    fn details(&self) -> Option<Value> {
        let object = match self {
            Self::NotFound(o) | Self::AlreadyExists(o) | Self::Conflict { object: o, .. } => o,
            Self::Invalid { object, causes } => {
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|c| {
                        json!({"reason": c.kind.cause_reason(), "message": c.message(), "field": c.field})
                    })
                    .collect();
                return Some(json!({
                    "name": object.name, "group": object.group, "kind": object.kind, "causes": causes
                }));
            }
            _ => return None,
        };
        Some(json!({"name": object.name, "group": object.group, "kind": object.resource}))
    }

    /// The `metav1.Status` object the real API server sends for this error.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.to_string(),
            "reason": self.reason(),
            "code": self.code(),
        });
        if let Some(details) = self.details() {
            status["details"] = details;
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (code, axum::Json(self.to_status())).into_response()
    }
}

/// Errors from starting or driving the simulator as a library.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("binding {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("building the kube client: {0}")]
    Client(#[from] kube::Error),
    #[error("building the kube client config: {0}")]
    Uri(String),
    #[error("kubesim does not serve {0}")]
    Unsupported(String),
    #[error("writing the kubeconfig {path}: {source}")]
    Kubeconfig {
        path: String,
        source: std::io::Error,
    },
    #[error("serializing an object: {0}")]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Api(Box<ApiError>),
}

impl From<ApiError> for SimError {
    fn from(error: ApiError) -> Self {
        Self::Api(Box::new(error))
    }
}

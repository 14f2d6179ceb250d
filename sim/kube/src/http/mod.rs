//! The HTTP face of kubesim: routing, discovery, object endpoints and watches.

mod discovery;
mod objects;
mod openapi;
mod query;
mod request_log;
mod reviews;
mod table;
mod target;
mod watch;

pub use request_log::{RequestLog, RequestRecord};

use crate::access::Tokens;
use crate::faults::Faults;
use crate::store::Store;
use axum::Router;
use axum::extract::{Path, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use std::sync::Arc;
use std::time::Duration;

/// Everything a request handler reaches.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<Store>,
    pub faults: Faults,
    pub log: RequestLog,
    /// How often watches that allow bookmarks get one.
    pub bookmark_interval: Duration,
    /// `host:port` reported in discovery.
    pub server_address: String,
    /// Bearer tokens TokenReview knows.
    pub tokens: Tokens,
}

/// kube-apiserver's `MaxRequestBodyBytes`.
pub const MAX_REQUEST_BODY_BYTES: usize = 3 << 20;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route(
            "/version",
            get(|| async { axum::Json(discovery::version()) }),
        )
        .route("/healthz", get(ok))
        .route("/readyz", get(ok))
        .route("/livez", get(ok))
        .route("/api", get(core_versions))
        .route("/apis", get(|| async { axum::Json(discovery::groups()) }))
        .route("/openapi/v3", get(|| async { axum::Json(openapi::root()) }))
        .route("/openapi/v3/{*path}", get(openapi_document))
        .route(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            post(reviews::token_review),
        )
        .route(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            post(reviews::subject_access_review),
        )
        .route("/api/{*rest}", any(objects::core))
        .route("/apis/{*rest}", any(objects::grouped))
        // The API server refuses request bodies over 3 MiB (413).
        .layer(axum::extract::DefaultBodyLimit::max(MAX_REQUEST_BODY_BYTES))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            record_and_delay,
        ))
        .with_state(state)
}

async fn ok() -> &'static str {
    "ok"
}

async fn openapi_document(Path(path): Path<String>) -> Response {
    match openapi::group_version(&path) {
        Some(document) => axum::Json(document).into_response(),
        None => crate::error::ApiError::UnknownResource.into_response(),
    }
}

async fn core_versions(State(state): State<AppState>) -> impl IntoResponse {
    axum::Json(discovery::core_versions(&state.server_address))
}

/// Applies the response-delay fault and logs each request with its status.
async fn record_and_delay(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or_default().to_string();
    let delay = state.faults.delay();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let (response, body) = match write_body(request).await {
        Ok((request, body)) => (next.run(request).await, body),
        Err(refused) => (refused, serde_json::Value::Null),
    };
    state.log.push(RequestRecord {
        method,
        path,
        query,
        status: response.status().as_u16(),
        body,
    });
    response
}

/// Reads a write's body for the log and puts it back for the handler; a
/// body past the API server's limit is answered 413 here.
async fn write_body(request: Request) -> Result<(Request, serde_json::Value), Response> {
    if request.method() == axum::http::Method::GET {
        return Ok((request, serde_json::Value::Null));
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_REQUEST_BODY_BYTES)
        .await
        .map_err(|_| axum::http::StatusCode::PAYLOAD_TOO_LARGE.into_response())?;
    let logged = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    Ok((
        Request::from_parts(parts, axum::body::Body::from(bytes)),
        logged,
    ))
}

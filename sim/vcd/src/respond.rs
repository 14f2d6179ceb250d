//! Response builders with VCD's headers: versioned media types, absolute
//! `Location` for tasks, `Link` values for pages.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

use crate::context;
use crate::paging::PageOut;
use crate::state::AppState;

fn with_type(status: StatusCode, content_type: String, body: String) -> Response {
    let mut response = (status, body).into_response();
    if let Ok(value) = HeaderValue::from_str(&content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-store, must-revalidate"),
    );
    response
}

/// A CloudAPI JSON body.
pub fn json(status: StatusCode, body: &impl Serialize) -> Response {
    let version = context::current().api_version;
    let text = serde_json::to_string(body).unwrap_or_default();
    with_type(status, format!("application/json;version={version}"), text)
}

pub fn ok(body: &impl Serialize) -> Response {
    json(StatusCode::OK, body)
}

/// A legacy `/api` body as `application/vnd.vmware.vcloud.<media>+json`.
pub fn legacy(media: &str, body: &Value) -> Response {
    let version = context::current().api_version;
    with_type(
        StatusCode::OK,
        format!("application/vnd.vmware.vcloud.{media}+json;version={version}"),
        body.to_string(),
    )
}

/// A page with its `Link` headers.
pub fn page(out: PageOut) -> Response {
    let mut response = ok(&out.body);
    for link in out.links {
        if let Ok(value) = HeaderValue::from_str(&link) {
            response.headers_mut().append(header::LINK, value);
        }
    }
    response
}

/// `202 Accepted`, empty body, absolute `Location` of the task.
pub fn accepted(state: &AppState, task_id: &str) -> Response {
    let mut response = StatusCode::ACCEPTED.into_response();
    if let Ok(value) = HeaderValue::from_str(&state.api_url(&format!("/task/{task_id}"))) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

//! The two layers around every handler. `observe` (outermost) applies
//! latency, negotiates the API version, sets the request context and logs
//! and counts the call. `route` (after routing, so it knows the template)
//! applies fault rules, then refuses a body that breaks the spec's
//! constraints.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes, to_bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::bearer_token;
use crate::context::{self, RequestContext};
use crate::error::ApiError;
use crate::faults::{FaultAction, TaskFailure};
use crate::ids::new_uuid;
use crate::observe::{LogEntry, body_value};
use crate::state::AppState;
use crate::tasks::now_rfc3339;

const BODY_LIMIT: usize = 16 * 1024 * 1024;

/// The route template a request matched, passed from `route` to `observe`.
#[derive(Clone)]
struct RouteTemplate(String);

/// Marks a response whose body breaks the connection.
#[derive(Clone)]
struct Reset;

/// Marks a broken response that stands in for the handler's real answer,
/// whose status the log records.
#[derive(Clone)]
struct AnswerLost(StatusCode);

/// The version named in the first `Accept` header that names one.
fn requested_version(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all("accept")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split([';', ',']))
        .find_map(|part| {
            part.trim()
                .strip_prefix("version=")
                .map(|v| v.trim().to_string())
        })
}

pub async fn observe(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    if path.starts_with("/_sim") {
        return next.run(request).await;
    }
    let latency = state.knobs().latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let request_id = new_uuid();
    let legacy = path.starts_with("/api");
    let versions = state.world().site.versions.clone();
    let requested = requested_version(request.headers()).filter(|_| !path.starts_with("/oauth"));
    let api_version = requested
        .clone()
        .unwrap_or_else(|| versions.last().cloned().unwrap_or_default());
    let ctx = RequestContext {
        request_id: request_id.clone(),
        legacy,
        api_version: api_version.clone(),
        fail_task: None,
    };
    let method = request.method().to_string();
    let path_and_query = request
        .uri()
        .path_and_query()
        .map_or(path.clone(), |p| p.to_string());
    let (parts, body) = request.into_parts();
    let request_bytes = to_bytes(body, BODY_LIMIT).await.unwrap_or_default();
    let mut response = context::scope(ctx.clone(), async {
        // A client asks which versions there are before it knows one.
        let listing = path == "/api/versions";
        if requested.is_some() && !listing && !versions.contains(&api_version) {
            return ApiError::new(
                StatusCode::NOT_ACCEPTABLE,
                "NOT_ACCEPTABLE",
                format!("API version {api_version} is not supported."),
            )
            .into_response();
        }
        next.run(Request::from_parts(
            parts,
            Body::from(request_bytes.clone()),
        ))
        .await
    })
    .await;
    let template = response
        .extensions()
        .get::<RouteTemplate>()
        .map_or(path.clone(), |t| t.0.clone());
    let reset = response.extensions().get::<Reset>().is_some();
    let lost = response.extensions().get::<AnswerLost>().map(|l| l.0);
    let (response_parts, response_body) = response.into_parts();
    let (response_value, body) = if lost.is_some() {
        (serde_json::json!("<answer lost>"), response_body)
    } else if reset {
        (serde_json::json!("<connection reset>"), response_body)
    } else {
        let bytes = to_bytes(response_body, BODY_LIMIT)
            .await
            .unwrap_or_default();
        (body_value(&bytes), Body::from(bytes))
    };
    state.log().record(LogEntry {
        time: now_rfc3339(),
        request_id: request_id.clone(),
        method,
        path: path_and_query,
        template,
        api_version,
        status: lost.unwrap_or(response_parts.status).as_u16(),
        request_body: body_value(&request_bytes),
        response_body: response_value,
    });
    response = Response::from_parts(response_parts, body);
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        response
            .headers_mut()
            .insert("x-vmware-vcloud-request-id", value);
    }
    if let Some(date) = skewed_date(state.knobs().clock_skew_ms) {
        response.headers_mut().insert("date", date);
    }
    response
}

/// The `Date` of a VCD whose clock is `skew_ms` off; `None` leaves the
/// server's own.
fn skewed_date(skew_ms: i64) -> Option<HeaderValue> {
    if skew_ms == 0 {
        return None;
    }
    let now = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_millis(skew_ms))
        .ok()?;
    let text = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&now)
        .ok()?;
    HeaderValue::from_str(&text).ok()
}

fn reset_response() -> Response {
    let stream = futures::stream::once(async {
        Err::<Bytes, std::io::Error>(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "vcdsim: injected connection reset",
        ))
    });
    let mut response = (StatusCode::OK, Body::from_stream(stream)).into_response();
    response.extensions_mut().insert(Reset);
    response
}

/// Drops the answer of a handler that has run to the end (a task it
/// started goes on alone) and breaks the connection instead: the client
/// gets neither the real status nor its headers.
fn lost_answer(real: Response) -> Response {
    let mut response = reset_response();
    response.extensions_mut().insert(AnswerLost(real.status()));
    response
}

pub async fn route(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let template = request.extensions().get::<MatchedPath>().map_or_else(
        || request.uri().path().to_string(),
        |m| m.as_str().to_string(),
    );
    let actions = state.faults().fire(request.method().as_str(), &template);
    let mut ctx = context::current();
    let mut early = None;
    let mut lose_answer = false;
    for action in actions {
        match action {
            FaultAction::Delay { ms } => tokio::time::sleep(Duration::from_millis(ms)).await,
            FaultAction::Error {
                status,
                minor_error_code,
                message,
            } => {
                let status =
                    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let message = if message.is_empty() {
                    "Injected fault.".to_string()
                } else {
                    message
                };
                early = Some(ApiError::new(status, &minor_error_code, message).into_response());
                break;
            }
            FaultAction::Reset => {
                early = Some(reset_response());
                break;
            }
            FaultAction::LoseAnswer => lose_answer = true,
            FaultAction::RevokeToken => {
                if let Some(token) = bearer_token(request.headers())
                    && let Some(access) = state.world().access_tokens.get_mut(&token)
                {
                    access.revoked = true;
                }
            }
            FaultAction::FailTask {
                minor_error_code,
                message,
            } => {
                ctx.fail_task = Some(Arc::new(TaskFailure {
                    minor: minor_error_code,
                    message: if message.is_empty() {
                        "Injected task failure.".to_string()
                    } else {
                        message
                    },
                }));
            }
        }
    }
    // A body that breaks the spec's constraints is refused before its
    // handler runs (`openapi::runtime`).
    let (matched, screening) = (template.clone(), state.clone());
    let answer = async move {
        match crate::openapi::runtime::screen(&screening, request, &matched).await {
            Ok(request) => next.run(request).await,
            Err(refused) => refused.into_response(),
        }
    };
    let mut response = match early {
        Some(response) => response,
        None if lose_answer => lost_answer(context::scope(ctx, answer).await),
        None => context::scope(ctx, answer).await,
    };
    response.extensions_mut().insert(RouteTemplate(template));
    response
}

//! `/api/versions`, the OAuth refresh-token grant (a user's reusable API
//! token, or a service account's one-time token that answers the next one)
//! and Basic sessions.

use std::collections::HashMap;

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::auth::{Principal, basic_credentials, issue_token};
use crate::error::{ApiError, ApiResult};
use crate::ids::uuid_of;
use crate::respond;
use crate::state::AppState;
use crate::world::identity::User;
use crate::world::service_account::Exchange;
use crate::world::{Ref, World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/versions", get(versions))
        .route("/oauth/provider/token", post(provider_token))
        .route("/oauth/tenant/{org}/token", post(tenant_token))
        .route("/cloudapi/1.0.0/sessions", post(tenant_session))
        .route("/cloudapi/1.0.0/sessions/provider", post(provider_session))
        .route(
            "/cloudapi/1.0.0/sessions/current",
            get(current_session).delete(logout),
        )
}

async fn versions(State(state): State<AppState>) -> Response {
    let versions = state.world().site.versions.clone();
    let info: Vec<Value> = versions
        .iter()
        .map(|version| {
            json!({
                "version": version,
                "deprecated": false,
                "loginUrl": state.api_url("/sessions"),
                "providerLoginUrl": state.api_url("/sessions/provider"),
                "mediaTypeMapping": [],
            })
        })
        .collect();
    respond::legacy("versions", &json!({ "versionInfo": info }))
}

fn invalid_grant(description: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": "invalid_grant", "error_description": description})),
    )
        .into_response()
}

/// The user behind a live API token, if it belongs to an org accepted here.
fn token_user(world: &World, token: &str, org_matches: impl Fn(&str) -> bool) -> Option<User> {
    let api_token = world
        .api_tokens
        .iter()
        .find(|t| t.value == token && !t.revoked)?;
    let user = find(&world.users, &api_token.user_id)?;
    let org = find(&world.orgs, &user.org_id)?;
    org_matches(&org.name).then(|| user.clone())
}

fn refresh_grant(
    state: &AppState,
    form: Result<Form<HashMap<String, String>>, FormRejection>,
    org_matches: impl Fn(&str) -> bool,
) -> Response {
    let Ok(Form(form)) = form else {
        return invalid_grant("the body must be a form with grant_type and refresh_token");
    };
    if form.get("grant_type").map(String::as_str) != Some("refresh_token") {
        return invalid_grant("grant_type must be refresh_token");
    }
    let Some(refresh_token) = form.get("refresh_token") else {
        return invalid_grant("refresh_token is missing");
    };
    let ttl = state.knobs().token_ttl();
    let mut world = state.world();
    let (user, next, ttl) =
        match crate::world::service_account::exchange(&mut world, refresh_token, &org_matches) {
            Some(Exchange::Issued {
                user,
                refresh_token,
                ttl: own,
            }) => (user, Some(refresh_token), own.unwrap_or(ttl)),
            Some(Exchange::Voided) => {
                return invalid_grant("the service account's refresh token was used or revoked");
            }
            None => match token_user(&world, refresh_token, org_matches) {
                Some(user) => (user, None, ttl),
                None => {
                    return invalid_grant(
                        "the API token is unknown, revoked or not valid for this org",
                    );
                }
            },
        };
    let access = issue_token(&mut world, &user, ttl);
    Json(json!({
        "access_token": access.token,
        "token_type": "Bearer",
        "expires_in": ttl.as_secs(),
        "refresh_token": next,
    }))
    .into_response()
}

async fn provider_token(
    State(state): State<AppState>,
    form: Result<Form<HashMap<String, String>>, FormRejection>,
) -> Response {
    refresh_grant(&state, form, |org| org.eq_ignore_ascii_case("system"))
}

async fn tenant_token(
    State(state): State<AppState>,
    Path(org_name): Path<String>,
    form: Result<Form<HashMap<String, String>>, FormRejection>,
) -> Response {
    refresh_grant(&state, form, |org| {
        org.eq_ignore_ascii_case(&org_name) && !org.eq_ignore_ascii_case("system")
    })
}

/// The principal's roles, as references to its org's roles.
fn role_refs(world: &World, principal: &Principal) -> Vec<Ref> {
    principal
        .roles
        .iter()
        .filter_map(|name| {
            world
                .roles
                .iter()
                .find(|r| r.org_id == principal.org.id && &r.name == name)
        })
        .map(|r| Ref::new(&r.name, &r.id))
        .collect()
}

fn session_body(world: &World, principal: &Principal, idle_minutes: u64) -> Value {
    json!({
        "id": principal.session_id,
        "site": {"name": world.site.name, "id": world.site.id},
        "user": principal.user,
        "org": principal.org,
        "location": format!("urn:vcloud:location:{}@{}", uuid_of(&world.site.id), world.site.name),
        "roles": principal.roles,
        "roleRefs": role_refs(world, principal),
        "sessionIdleTimeoutMinutes": idle_minutes,
    })
}

fn basic_login(state: &AppState, headers: &HeaderMap, provider: bool) -> ApiResult<Response> {
    let (user_name, org_name, password) =
        basic_credentials(headers).ok_or_else(ApiError::unauthorized)?;
    let ttl = state.knobs().token_ttl();
    let access = {
        let mut world = state.world();
        let org = world
            .org_by_name(&org_name)
            .ok_or_else(ApiError::unauthorized)?;
        if org.is_system() != provider {
            return Err(ApiError::unauthorized());
        }
        let user = world
            .users
            .iter()
            .find(|u| u.org_id == org.id && u.name == user_name && u.password == password)
            .cloned()
            .ok_or_else(ApiError::unauthorized)?;
        issue_token(&mut world, &user, ttl)
    };
    let mut token_headers = HeaderMap::new();
    token_headers.insert(
        "authorization",
        HeaderValue::from_str(&format!("Bearer {}", access.token))
            .map_err(|_| ApiError::unauthorized())?,
    );
    let principal = crate::auth::resolve(state, &token_headers)?;
    let idle_minutes = state.knobs().idle_timeout().as_secs() / 60;
    let body = session_body(&state.world(), &principal, idle_minutes);
    let mut response = respond::ok(&body);
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&access.token) {
        headers.insert("x-vmware-vcloud-access-token", value);
    }
    headers.insert(
        "x-vmware-vcloud-token-type",
        HeaderValue::from_static("Bearer"),
    );
    Ok(response)
}

async fn tenant_session(State(state): State<AppState>, headers: HeaderMap) -> ApiResult<Response> {
    basic_login(&state, &headers, false)
}

async fn provider_session(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    basic_login(&state, &headers, true)
}

async fn current_session(State(state): State<AppState>, principal: Principal) -> Response {
    let idle_minutes = state.knobs().idle_timeout().as_secs() / 60;
    respond::ok(&session_body(&state.world(), &principal, idle_minutes))
}

async fn logout(State(state): State<AppState>, principal: Principal) -> StatusCode {
    if let Some(access) = state.world().access_tokens.get_mut(&principal.token) {
        access.revoked = true;
    }
    StatusCode::NO_CONTENT
}

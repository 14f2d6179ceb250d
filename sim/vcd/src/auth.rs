//! Who is calling: bearer tokens resolve to a principal (user, org,
//! sysadmin or not) and the tenant-context header narrows what it sees.

use std::time::Instant;

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD as BASE64, URL_SAFE_NO_PAD};

use crate::error::{ApiError, ApiResult};
use crate::ids::{new_uuid, same_id};
use crate::state::AppState;
use crate::world::identity::{AccessToken, User};
use crate::world::{Ref, World, find};

#[derive(Debug, Clone)]
pub struct Principal {
    pub token: String,
    pub session_id: String,
    pub user: Ref,
    pub org: Ref,
    pub sysadmin: bool,
    pub roles: Vec<String>,
    /// The one org this request may see; `None` for an unscoped sysadmin.
    pub view: Option<String>,
}

impl Principal {
    pub fn sees(&self, org_id: &str) -> bool {
        self.view.as_deref().is_none_or(|view| view == org_id)
    }

    pub fn require_provider(&self) -> ApiResult<()> {
        if self.sysadmin {
            Ok(())
        } else {
            Err(ApiError::provider_only())
        }
    }

    /// Checks that an object of `org_id` is visible, else 403 on `id`.
    pub fn check(&self, org_id: Option<&str>, id: &str) -> ApiResult<()> {
        match org_id {
            Some(org) if self.sees(org) => Ok(()),
            _ => Err(ApiError::forbidden(id)),
        }
    }
}

/// The bearer token of a request, from any header a client may use.
pub fn bearer_token(headers: &HeaderMap) -> Option<String> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(value) = header("authorization") {
        let (scheme, token) = value.split_once(' ')?;
        if scheme.eq_ignore_ascii_case("bearer") {
            return Some(token.trim().to_string());
        }
    }
    header("x-vmware-vcloud-access-token")
        .or_else(|| header("x-vcloud-authorization"))
        .map(|t| t.trim().to_string())
}

/// `user@org:password` from a Basic header; a user `org/user` overrides the org.
pub fn basic_credentials(headers: &HeaderMap) -> Option<(String, String, String)> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(BASE64.decode(encoded.trim()).ok()?).ok()?;
    let (login, password) = decoded.split_once(':')?;
    let (user, org) = match login.split_once('/') {
        Some((org, user)) => (user, org),
        None => login.rsplit_once('@')?,
    };
    Some((user.to_string(), org.to_string(), password.to_string()))
}

/// Issues a JWT-looking access token (longer than 32 characters, as clients
/// expect) for a new session of `user`.
pub fn issue_token(world: &mut World, user: &User, ttl: std::time::Duration) -> AccessToken {
    let claims = URL_SAFE_NO_PAD.encode(format!(
        "{{\"sub\":\"{}\",\"jti\":\"{}\"}}",
        user.name,
        new_uuid()
    ));
    let token = AccessToken {
        token: format!(
            "eyJhbGciOiJSUzI1NiJ9.{claims}.{}",
            new_uuid().replace('-', "")
        ),
        session_id: new_uuid(),
        user_id: user.id.clone(),
        revoked: false,
        expires_at: Instant::now() + ttl,
        last_used: Instant::now(),
    };
    world
        .access_tokens
        .insert(token.token.clone(), token.clone());
    token
}

/// Resolves the principal of a token; touches its idle timer.
pub fn resolve(state: &AppState, headers: &HeaderMap) -> ApiResult<Principal> {
    let token = bearer_token(headers).ok_or_else(ApiError::unauthorized)?;
    let idle_timeout = state.knobs().idle_timeout();
    let mut world = state.world();
    let now = Instant::now();
    let access = world
        .access_tokens
        .get_mut(&token)
        .filter(|t| t.is_valid(now, idle_timeout))
        .ok_or_else(ApiError::unauthorized)?;
    access.last_used = now;
    let (session_id, user_id) = (access.session_id.clone(), access.user_id.clone());
    let user = find(&world.users, &user_id).ok_or_else(ApiError::unauthorized)?;
    let org = find(&world.orgs, &user.org_id).ok_or_else(ApiError::unauthorized)?;
    let sysadmin = org.is_system();
    let requested = headers
        .get("x-vmware-vcloud-tenant-context")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    let view = match requested {
        None if sysadmin => None,
        None => Some(org.id.clone()),
        Some(wanted) => {
            let target = world
                .orgs
                .iter()
                .find(|o| same_id(&o.id, wanted))
                .ok_or_else(|| ApiError::forbidden(wanted))?;
            if !sysadmin && target.id != org.id {
                return Err(ApiError::forbidden(wanted));
            }
            (!target.is_system()).then(|| target.id.clone())
        }
    };
    Ok(Principal {
        token,
        session_id,
        user: Ref::new(&user.name, &user.id),
        org: Ref::new(&org.name, &org.id),
        sysadmin,
        roles: user.roles.clone(),
        view,
    })
}

impl FromRequestParts<AppState> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        resolve(state, &parts.headers)
    }
}

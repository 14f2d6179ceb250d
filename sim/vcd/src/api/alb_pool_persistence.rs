//! A pool's `persistenceProfile` as the spec defines it
//! (`EdgeLoadBalancerPersistenceProfile`): one of five types; a cookie or
//! header name as `value` for the types that need one; `CUSTOM_HTTP_HEADER`,
//! `APP_COOKIE` and `TLS` only on a PREMIUM load balancer.

use crate::error::{ApiError, ApiResult};
use crate::world::alb::PersistenceProfile;

const TYPES: [&str; 5] = [
    "CLIENT_IP",
    "HTTP_COOKIE",
    "CUSTOM_HTTP_HEADER",
    "APP_COOKIE",
    "TLS",
];
const NAMED: [&str; 3] = ["HTTP_COOKIE", "CUSTOM_HTTP_HEADER", "APP_COOKIE"];
const PREMIUM_ONLY: [&str; 3] = ["CUSTOM_HTTP_HEADER", "APP_COOKIE", "TLS"];

pub(super) fn check(profile: &PersistenceProfile, feature_set: &str) -> ApiResult<()> {
    let kind = profile.profile_type.as_str();
    if !TYPES.contains(&kind) {
        return Err(ApiError::bad_request(format!(
            "Invalid persistence profile type '{kind}'. Supported values are: {}.",
            TYPES.join(", ")
        )));
    }
    let named = profile
        .value
        .as_deref()
        .is_some_and(|v| !v.trim().is_empty());
    if NAMED.contains(&kind) && !named {
        return Err(ApiError::bad_request(format!(
            "Persistence profile type {kind} requires a value (the cookie or header name)."
        )));
    }
    if PREMIUM_ONLY.contains(&kind) && feature_set != "PREMIUM" {
        return Err(ApiError::bad_request(format!(
            "Persistence profile type {kind} requires an Edge Gateway Load Balancer with PREMIUM feature set."
        )));
    }
    Ok(())
}

//! A virtual service's fields by API version. A request reads and writes
//! only the fields of its negotiated version:
//! - `ipv6VirtualIpAddress` from 37.0 and `transparentModeEnabled` from
//!   37.1 (older requests setting them: a 400 naming the version);
//! - `nonCriticalLoggingEnabled` from 38.0 (stored, `false` by default);
//! - from 39.0 the read-only `status` is an object (a model:
//!   `{"realizationStatus": "REALIZED"}`); before, a string.
//!
//! A PUT at an older version leaves the fields it does not know as stored;
//! a PUT at a version that defines a field and omits it resets it to its
//! default.

use serde_json::{Value, json};

use crate::context::{self, api_at_least};
use crate::error::{ApiError, ApiResult};
use crate::strict::not_in_version;
use crate::world::alb::VirtualService;

const CLASS: &str = "EdgeLoadBalancerVirtualService";

/// `ipv6VirtualIpAddress` exists from API 37.0.
fn ipv6_vip_in_api() -> bool {
    api_at_least(37, 0)
}

/// `transparentModeEnabled` exists from API 37.1 (VCD 10.4.1).
fn transparent_mode_in_api() -> bool {
    api_at_least(37, 1)
}

/// `nonCriticalLoggingEnabled` exists from API 38.0 (VCD 10.5).
fn non_critical_logging_in_api() -> bool {
    api_at_least(38, 0)
}

/// `status` is an object from API 39.0 (VCD 10.6).
fn status_object_in_api() -> bool {
    api_at_least(39, 0)
}

fn needs(field: &str, version: &str) -> ApiError {
    ApiError::bad_request(format!(
        "{field} needs API version {version} or later, not {}.",
        context::current().api_version
    ))
}

/// Refuses a field the request's version lacks; drops the read-only
/// `status` once checked.
pub(super) fn check_body(vs: &mut VirtualService) -> ApiResult<()> {
    if vs.transparent_mode_enabled.is_some() && !transparent_mode_in_api() {
        return Err(needs("transparentModeEnabled", "37.1"));
    }
    if vs.ipv6_virtual_ip_address.is_some() && !ipv6_vip_in_api() {
        return Err(needs("ipv6VirtualIpAddress", "37.0"));
    }
    if vs.non_critical_logging_enabled.is_some() && !non_critical_logging_in_api() {
        return Err(not_in_version("nonCriticalLoggingEnabled", CLASS));
    }
    if vs.sent_status.as_ref().is_some_and(Value::is_object) && !status_object_in_api() {
        return Err(ApiError::bad_request(format!(
            "Cannot deserialize \"status\" (class {CLASS}): a status object is not in API version {}",
            context::current().api_version
        )));
    }
    vs.sent_status = None;
    Ok(())
}

/// Fills the fields the request's version does not know from `existing`
/// (on update), and the version's defaults for those it omitted.
pub(super) fn complete(vs: &mut VirtualService, existing: Option<&VirtualService>) {
    if let Some(existing) = existing {
        if !transparent_mode_in_api() {
            vs.transparent_mode_enabled = existing.transparent_mode_enabled;
        }
        if !ipv6_vip_in_api() {
            vs.ipv6_virtual_ip_address = existing.ipv6_virtual_ip_address.clone();
        }
        if !non_critical_logging_in_api() {
            vs.non_critical_logging_enabled = existing.non_critical_logging_enabled;
        }
    }
    if non_critical_logging_in_api() {
        vs.non_critical_logging_enabled = Some(vs.non_critical_logging_enabled.unwrap_or(false));
    }
}

/// Shapes an answer (`status` already set as a string) to the version.
pub(super) fn shape_view(view: &mut Value, vs: &VirtualService) {
    let Some(object) = view.as_object_mut() else {
        return;
    };
    if !transparent_mode_in_api() {
        object.remove("transparentModeEnabled");
    }
    if !ipv6_vip_in_api() {
        object.remove("ipv6VirtualIpAddress");
    }
    if non_critical_logging_in_api() {
        let enabled = vs.non_critical_logging_enabled.unwrap_or(false);
        object.insert("nonCriticalLoggingEnabled".into(), json!(enabled));
    } else {
        object.shift_remove("nonCriticalLoggingEnabled");
    }
    if status_object_in_api()
        && let Some(status) = object.get_mut("status")
    {
        *status = json!({"realizationStatus": status.take()});
    }
}

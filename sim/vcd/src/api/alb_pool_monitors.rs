//! A pool's `healthMonitors` by API version. Up to 38.1 an item is
//! `{type, name, systemDefined}`: a SYSTEM monitor named by type, stored
//! as sent. From 39.0 an item may name a TENANT monitor by `id`, which
//! only `POST /loadBalancer/healthMonitors/assignments` attaches (the
//! strict reading: the reference documents both ways, not which VCD
//! takes). A pool PUT may list an assigned monitor back and unassigns one
//! it leaves out; a create may list none. Reads from 39.0 list the
//! assigned monitors after the stored items, as `{id, name, type,
//! systemDefined: false}`; older reads and PUTs leave them alone.

use serde_json::{Value, json};

use crate::context::api_at_least;
use crate::error::{ApiError, ApiResult};
use crate::ids::same_id;
use crate::strict::not_in_version;
use crate::world::alb::Pool;
use crate::world::member_health::{assigned_monitors, retain_assignments};
use crate::world::{World, find};

const ATTACH: &str = "attach a tenant monitor with POST /loadBalancer/healthMonitors/assignments";

/// A TENANT monitor a pool body lists: where, its id and the type sent.
#[derive(Clone)]
pub(super) struct Listed {
    at: String,
    id: String,
    monitor_type: String,
}

/// Takes the items naming TENANT monitors out of a pool body, which keeps
/// the SYSTEM ones. `None` before 39.0, whose bodies cannot name them (a
/// PUT then leaves the assignments as they are); 39.0 properties are
/// refused there, and a monitor's settings at any version (a pool names
/// its monitors; their settings are their own).
pub(super) fn take_listed(pool: &mut Pool) -> ApiResult<Option<Vec<Listed>>> {
    let from_39_0 = api_at_least(39, 0);
    for (i, item) in pool.health_monitors.iter().enumerate() {
        if let Some(field) = item.fields_since_39_0().first().filter(|_| !from_39_0) {
            return Err(not_in_version(field, "EdgeLoadBalancerHealthMonitor"));
        }
        if let Some(field) = item.definition_fields().first() {
            return Err(ApiError::bad_request(format!(
                "healthMonitors[{i}].{field}: a pool names its health monitors; a monitor's settings are written with PUT /loadBalancer/healthMonitors/{{id}}."
            )));
        }
    }
    if !from_39_0 {
        return Ok(None);
    }
    let (tenant, system): (Vec<_>, Vec<_>) = std::mem::take(&mut pool.health_monitors)
        .into_iter()
        .enumerate()
        .partition(|(_, item)| item.id.is_some());
    pool.health_monitors = system.into_iter().map(|(_, item)| item).collect();
    Ok(Some(
        tenant
            .into_iter()
            .map(|(i, item)| Listed {
                at: format!("healthMonitors[{i}]"),
                id: item.id.unwrap_or_default(),
                monitor_type: item.monitor_type,
            })
            .collect(),
    ))
}

/// A new pool has no assignments yet, so it lists no TENANT monitor.
pub(super) fn refuse_on_create(listed: Option<&Vec<Listed>>) -> ApiResult<()> {
    match listed.and_then(|l| l.first()) {
        Some(item) => Err(ApiError::bad_request(format!(
            "{}.id: health monitor {} is not assigned to a new pool; {ATTACH}.",
            item.at, item.id
        ))),
        None => Ok(()),
    }
}

/// Each listed monitor is a TENANT monitor assigned to the pool, of the
/// type the item says.
pub(super) fn check_listed(world: &World, pool_id: &str, listed: &[Listed]) -> ApiResult<()> {
    for item in listed {
        let assigned = assigned_monitors(world, pool_id);
        let monitor = assigned.iter().find(|m| same_id(m.id(), &item.id));
        match (monitor, find(&world.health_monitors, &item.id)) {
            (Some(monitor), _) if monitor.body.monitor_type != item.monitor_type => {
                return Err(ApiError::bad_request(format!(
                    "{}.type: '{}' is not the type of health monitor {} ({}).",
                    item.at,
                    item.monitor_type,
                    monitor.name(),
                    monitor.body.monitor_type
                )));
            }
            (Some(_), _) => {}
            (None, Some(system)) if system.is_system() => {
                return Err(ApiError::bad_request(format!(
                    "{}.id: {} is a SYSTEM health monitor; a pool names SYSTEM monitors by type ({{\"type\": \"{}\"}}).",
                    item.at,
                    system.name(),
                    system.body.monitor_type
                )));
            }
            (None, _) => {
                return Err(ApiError::bad_request(format!(
                    "{}.id: health monitor {} is not assigned to this pool; {ATTACH}.",
                    item.at, item.id
                )));
            }
        }
    }
    Ok(())
}

/// After a 39.0+ PUT: the pool keeps the assignments its body listed.
pub(super) fn unassign_unlisted(world: &mut World, pool_id: &str, listed: &[Listed]) {
    retain_assignments(world, pool_id, |monitor_id| {
        listed.iter().any(|item| same_id(monitor_id, &item.id))
    });
}

/// The pool's `healthMonitors` as the request's version reads them.
pub(super) fn view(world: &World, pool: &Pool) -> Value {
    let mut items: Vec<Value> = pool.health_monitors.iter().map(|m| json!(m)).collect();
    if api_at_least(39, 0) {
        let assigned = assigned_monitors(world, pool.id.as_deref().unwrap_or_default());
        items.extend(assigned.into_iter().map(|m| {
            json!({"id": m.id(), "name": m.name(), "type": m.body.monitor_type, "systemDefined": false})
        }));
    }
    Value::Array(items)
}

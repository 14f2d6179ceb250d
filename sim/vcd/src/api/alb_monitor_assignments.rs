//! `GET`/`POST /cloudapi/1.0.0/loadBalancer/healthMonitors/assignments`
//! (API 39.0): a TENANT monitor linked with a pool of its org. The list
//! needs exactly one of its two filters, as the reference says ("Only one
//! should be specified"). A create is a task of the pool's gateway, owned
//! by the new assignment. Reading or deleting one assignment is not
//! modelled: the reference does not give their paths.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::middleware::from_fn;
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;
use serde_json::{Value, json};

use super::alb_health_monitors::{Monitors, from_api_39_0};
use super::alb_pools::Pools;
use super::collection::Collection;
use super::task_writes::{submit_checked, task_owner};
use super::{Params, list, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::fiql::{Filter, Op};
use crate::ids::{new_urn, same_id};
use crate::paging::STANDARD;
use crate::state::AppState;
use crate::strict::{ReadOnly, definition};
use crate::tasks::TaskRequest;
use crate::world::health_monitor::MonitorAssignment;
use crate::world::{Ref, World, find};

const PATH: &str = "/loadBalancer/healthMonitors/assignments";

/// Gated like the monitors: from API 39.0.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/loadBalancer/healthMonitors/assignments",
            get(list_assignments).post(create_assignment),
        )
        .route_layer(from_fn(from_api_39_0))
}

/// `EdgeLoadBalancerHealthMonitorAssignment` as a create sends it; VCD
/// gives the assignment a new id ("For create, a new ID will be generated").
#[derive(Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
struct AssignmentBody {
    health_monitor_ref: Option<Ref>,
    load_balancer_pool_ref: Option<Ref>,
    #[serde(default, rename = "id")]
    _id: ReadOnly,
}
definition!(AssignmentBody, "EdgeLoadBalancerHealthMonitorAssignment");

const FILTERS: [&str; 2] = ["healthMonitorRef.id", "loadBalancerPoolRef.id"];

/// `filter` is one `healthMonitorRef.id==<id>` or `loadBalancerPoolRef.id==<id>`.
fn check_filter(params: &Params) -> ApiResult<()> {
    let rule = "filter must be exactly one of healthMonitorRef.id==<id> or loadBalancerPoolRef.id==<id> (only one may be specified)";
    let Some(text) = params.0.get("filter").filter(|f| !f.is_empty()) else {
        return Err(ApiError::bad_request(format!("{rule}; none was given.")));
    };
    match Filter::parse(text).map_err(|e| ApiError::bad_request(e.to_string()))? {
        Filter::Compare {
            field, op: Op::Eq, ..
        } if FILTERS.contains(&field.as_str()) => Ok(()),
        _ => Err(ApiError::bad_request(format!("{rule}, not '{text}'."))),
    }
}

/// `pageSize` is 0 to 128, and above is refused rather than clamped.
fn check_page_size(params: &Params) -> ApiResult<()> {
    let size = params.0.get("pageSize").and_then(|s| s.parse::<u32>().ok());
    match size.filter(|size| *size > STANDARD.max_size) {
        Some(size) => Err(ApiError::bad_request(format!(
            "pageSize: {size} is above maximum {}.",
            STANDARD.max_size
        ))),
        None => Ok(()),
    }
}

fn assignment_view(world: &World, assignment: &MonitorAssignment) -> Value {
    let monitor = find(&world.health_monitors, &assignment.monitor_id);
    let pool = find(&world.pools, &assignment.pool_id);
    json!({
        "id": assignment.id,
        "healthMonitorRef": {"name": monitor.map(|m| m.name()), "id": assignment.monitor_id},
        "loadBalancerPoolRef": {"name": pool.map(|p| p.name.as_str()), "id": assignment.pool_id},
    })
}

/// The assignments of the pools the principal sees.
async fn list_assignments(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    check_filter(&params)?;
    check_page_size(&params)?;
    let items = {
        let world = state.world();
        world
            .monitor_assignments
            .iter()
            .filter(|a| Pools::find_visible(&world, &principal, &a.pool_id).is_ok())
            .map(|a| assignment_view(&world, a))
            .collect()
    };
    list(
        &state,
        PATH,
        &params,
        STANDARD,
        items,
        None,
        "EdgeLoadBalancerHealthMonitorAssignments",
    )
}

/// The monitor and the pool still exist, and are not linked yet.
fn check_new(world: &World, assignment: &MonitorAssignment) -> ApiResult<()> {
    let monitor = find(&world.health_monitors, &assignment.monitor_id)
        .ok_or_else(|| ApiError::forbidden(&assignment.monitor_id))?;
    let pool = find(&world.pools, &assignment.pool_id)
        .ok_or_else(|| ApiError::forbidden(&assignment.pool_id))?;
    let linked = world.monitor_assignments.iter().any(|a| {
        same_id(&a.monitor_id, &assignment.monitor_id) && same_id(&a.pool_id, &assignment.pool_id)
    });
    match linked {
        true => Err(ApiError::bad_request(format!(
            "Health monitor {} is already assigned to pool {} (a duplicate assignment).",
            monitor.name(),
            pool.name
        ))),
        false => Ok(()),
    }
}

/// The id a reference names; required.
fn required_id(reference: Option<Ref>, field: &str) -> ApiResult<String> {
    reference
        .map(|r| r.id)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| ApiError::bad_request(format!("$.{field}.id: required property missing.")))
}

async fn create_assignment(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let body: AssignmentBody = parse_body(&body)?;
    let monitor_id = required_id(body.health_monitor_ref, "healthMonitorRef")?;
    let pool_id = required_id(body.load_balancer_pool_ref, "loadBalancerPoolRef")?;
    let (assignment, request) = {
        let world = state.world();
        let monitor = Monitors::find_visible(&world, &principal, &monitor_id)?;
        let pool = Pools::find_visible(&world, &principal, &pool_id)?;
        let pool_org = world.gateway_org(&pool.gateway_ref.id).unwrap_or_default();
        if monitor.is_system() {
            return Err(ApiError::bad_request(format!(
                "$.healthMonitorRef: {} is a SYSTEM health monitor; a pool names SYSTEM monitors by type in its healthMonitors.",
                monitor.name()
            )));
        }
        if monitor.org_id.as_deref() != Some(pool_org) {
            return Err(ApiError::bad_request(format!(
                "$.healthMonitorRef: health monitor {} belongs to another organization than pool {}.",
                monitor.name(),
                pool.name
            )));
        }
        let assignment = MonitorAssignment {
            id: new_urn("loadBalancerHealthMonitorAssignment"),
            monitor_id: monitor.id().to_string(),
            pool_id: pool.id.clone().unwrap_or_default(),
        };
        let request = TaskRequest {
            operation_name: "createLoadBalancerHealthMonitorAssignment",
            operation: format!(
                "Assigning load balancer health monitor {} to pool {}",
                monitor.name(),
                pool.name
            ),
            gateway_id: Some(pool.gateway_ref.id.clone()),
            owner: task_owner(
                format!("{PATH}/{}", assignment.id),
                &assignment.id,
                monitor.name(),
            ),
            org_id: pool_org.to_string(),
        };
        (assignment, request)
    };
    let checked = assignment.clone();
    let check = move |w: &World| check_new(w, &checked);
    let apply = move |world: &mut World| {
        world.monitor_assignments.push(assignment);
        Ok(())
    };
    submit_checked(&state, &principal, request, check, apply).await
}

//! Health monitors (API 39.0, VCD 10.6): `POST /loadBalancer/healthMonitors`,
//! `GET`/`PUT`/`DELETE …/healthMonitors/{id}`, the per-gateway
//! `healthMonitorSummaries` and (`alb_monitor_assignments`) the
//! assignments to pools. TENANT monitors belong to the org of the caller
//! that created them; SYSTEM ones are read-only. Writes are tasks owned by
//! the monitor. Below 39.0 none of these paths exist.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::middleware::{Next, from_fn};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::collection::{Collection, get_item};
use super::task_writes::{Operations, Placement, Writable, create, delete_item, replace};
use super::{Params, gateway_summaries, parse_body};
use crate::auth::Principal;
use crate::context::{self, api_at_least};
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::openapi::runtime::definition_refusal;
use crate::state::AppState;
use crate::world::health_monitor::{HealthMonitor, Monitor};
use crate::world::member_health::monitor_pool_count;
use crate::world::{World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/cloudapi/1.0.0/loadBalancer/healthMonitors",
            post(create_monitor),
        )
        .route(
            "/cloudapi/1.0.0/loadBalancer/healthMonitors/{id}",
            get(get_item::<Monitors>)
                .put(update_monitor)
                .delete(delete_item::<Monitors>),
        )
        .route(
            "/cloudapi/1.0.0/edgeGateways/{id}/loadBalancer/healthMonitorSummaries",
            get(monitor_summaries),
        )
        .route_layer(from_fn(from_api_39_0))
}

/// Below API 39.0 the paths are answered as any path VCD does not serve.
pub(super) async fn from_api_39_0(request: Request, next: Next) -> Response {
    match api_at_least(39, 0) {
        true => next.run(request).await,
        false => ApiError::unknown_path().into_response(),
    }
}

pub(super) struct Monitors;

impl Collection for Monitors {
    type Item = Monitor;

    fn all(world: &World) -> &[Monitor] {
        &world.health_monitors
    }

    /// SYSTEM monitors, and the TENANT ones of the principal's org.
    fn visible(_world: &World, principal: &Principal, monitor: &Monitor) -> bool {
        monitor
            .org_id
            .as_deref()
            .is_none_or(|org| principal.sees(org))
    }

    fn view(_world: &World, monitor: &Monitor) -> Value {
        json!(monitor.body.without_password())
    }
}

impl Writable for Monitors {
    const NOUN: &'static str = "load balancer health monitor";
    const PATH: &'static str = "/loadBalancer/healthMonitors";
    const OPERATIONS: Operations = Operations {
        create: "createLoadBalancerHealthMonitor",
        update: "updateLoadBalancerHealthMonitor",
        delete: "deleteLoadBalancerHealthMonitor",
    };

    fn all_mut(world: &mut World) -> &mut Vec<Monitor> {
        &mut world.health_monitors
    }

    fn name(monitor: &Monitor) -> &str {
        monitor.name()
    }

    fn placement(_world: &World, _principal: &Principal, monitor: &Monitor) -> Placement {
        Placement {
            gateway_id: None,
            org_id: monitor.org_id.clone().unwrap_or_default(),
        }
    }

    /// SYSTEM monitors are read-only.
    fn writable<'a>(world: &'a World, principal: &Principal, id: &str) -> ApiResult<&'a Monitor> {
        let monitor = Self::find_visible(world, principal, id)?;
        if monitor.is_system() {
            return Err(ApiError::bad_request(format!(
                "{} is a SYSTEM health monitor, which is read-only.",
                monitor.name()
            )));
        }
        Ok(monitor)
    }

    /// A monitor assigned to a pool cannot be deleted.
    fn check_removable(world: &World, monitor: &Monitor) -> ApiResult<()> {
        let pools: Vec<&str> = world
            .monitor_assignments
            .iter()
            .filter(|a| same_id(&a.monitor_id, monitor.id()))
            .filter_map(|a| find(&world.pools, &a.pool_id))
            .map(|p| p.name.as_str())
            .collect();
        match pools.first() {
            Some(first) => Err(ApiError::bad_request(format!(
                "Health monitor {} is assigned to {} pool(s), {first} first, and cannot be deleted.",
                monitor.name(),
                pools.len()
            ))),
            None => Ok(()),
        }
    }
}

/// A monitor body, checked: the constraints the reference states (as the
/// spec screen words them), then `HealthMonitor::check`.
fn parse_monitor(body: &[u8]) -> ApiResult<HealthMonitor> {
    let version = context::current().api_version;
    if let Some(refused) = definition_refusal("EdgeLoadBalancerHealthMonitor", &version, body) {
        return Err(refused);
    }
    let monitor: HealthMonitor = parse_body(body)?;
    monitor.check().map_err(ApiError::bad_request)?;
    Ok(monitor)
}

/// Names are unique among the org's TENANT monitors and are not a SYSTEM
/// monitor's.
fn check_name(world: &World, monitor: &Monitor) -> ApiResult<()> {
    let taken = world.health_monitors.iter().find(|m| {
        m.name() == monitor.name()
            && m.id() != monitor.id()
            && (m.is_system() || m.org_id == monitor.org_id)
    });
    match taken {
        Some(other) => Err(ApiError::duplicate_name(
            "load balancer health monitor",
            monitor.name(),
            match other.is_system() {
                true => "the SYSTEM health monitors",
                false => "this organization",
            },
        )),
        None => Ok(()),
    }
}

async fn create_monitor(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let mut body = parse_monitor(&body)?;
    if let Some(id) = &body.id {
        return Err(ApiError::bad_request(format!(
            "$.id: '{id}' is set on create; VCD gives a new monitor its id."
        )));
    }
    body.id = Some(new_urn("loadBalancerHealthMonitor"));
    body.system_defined = Some(false);
    let org_id = principal
        .view
        .clone()
        .unwrap_or_else(|| principal.org.id.clone());
    let monitor = Monitor {
        body,
        org_id: Some(org_id),
    };
    let placement = Monitors::placement(&state.world(), &principal, &monitor);
    let checked = monitor.clone();
    let check = move |w: &World| check_name(w, &checked);
    create::<Monitors>(&state, &principal, monitor, placement, check).await
}

async fn update_monitor(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut body = parse_monitor(&body)?;
    let existing = Monitors::writable(&state.world(), &principal, &id)?.clone();
    if let Some(sent) = body
        .id
        .as_deref()
        .filter(|sent| !same_id(existing.id(), sent))
    {
        return Err(ApiError::bad_request(format!(
            "$.id: '{sent}' is not the id in the path ({}).",
            existing.id()
        )));
    }
    if body.monitor_type != existing.body.monitor_type {
        return Err(ApiError::bad_request(format!(
            "$.type: '{}' is not the monitor's type {}; a monitor keeps its type (create another one).",
            body.monitor_type, existing.body.monitor_type
        )));
    }
    body.id = existing.body.id.clone();
    body.system_defined = Some(false);
    let monitor = Monitor {
        body,
        org_id: existing.org_id.clone(),
    };
    let placement = Monitors::placement(&state.world(), &principal, &monitor);
    let checked = monitor.clone();
    let check = move |w: &World| {
        find(&w.health_monitors, checked.id()).ok_or_else(|| ApiError::forbidden(checked.id()))?;
        check_name(w, &checked)
    };
    replace::<Monitors>(&state, &principal, monitor, placement, check).await
}

fn summary_view(world: &World, gateway_id: &str, monitor: &Monitor) -> Value {
    json!({
        "id": monitor.id(),
        "name": monitor.name(),
        "description": monitor.body.description,
        "type": monitor.body.monitor_type,
        "poolCount": monitor_pool_count(world, monitor, gateway_id),
        "scope": monitor.scope(),
    })
}

/// The SYSTEM monitors and the TENANT ones of the gateway's org, each
/// with the gateway's pools that use it.
async fn monitor_summaries(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let kind = ("healthMonitor", "EdgeLoadBalancerHealthMonitorSummaries");
    gateway_summaries(&state, &principal, &id, &params, kind, |world, gateway| {
        world
            .health_monitors
            .iter()
            .filter(|m| m.org_id.as_deref().is_none_or(|org| org == gateway.org_id))
            .map(|m| summary_view(world, &gateway.id, m))
            .collect()
    })
}

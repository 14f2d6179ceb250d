//! The admin API under `/_sim/`: inspect and steer the simulator over HTTP
//! (no authentication; never logged or counted).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use crate::faults::FaultRule;
use crate::knobs::Knobs;
use crate::scenario::VmSpec;
use crate::state::AppState;
use crate::world::compute::PowerState;
use crate::world::hooks::HookError;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/_sim/state", get(dump_state))
        .route("/_sim/knobs", get(get_knobs).put(put_knobs))
        .route("/_sim/requests", get(requests).delete(reset_log))
        .route("/_sim/counters", get(counters))
        .route("/_sim/counters/reset", post(reset_log))
        .route(
            "/_sim/faults",
            get(list_faults).post(add_fault).delete(clear_faults),
        )
        .route("/_sim/vms/{id}/power", put(set_power))
        .route("/_sim/vms/{id}", delete(remove_vm))
        .route("/_sim/vapps/{id}/vms", post(add_vm))
        .route(
            "/_sim/pools/{id}/members/{ip}/health",
            put(set_member_health),
        )
        .route("/_sim/probes/{ip}/{port}", put(set_probe))
        .route("/_sim/tokens/revoke", post(revoke_token))
        .route(
            "/_sim/gateways/{id}/transparentMode",
            put(set_transparent_mode),
        )
        .route(
            "/_sim/gateways/{id}/defaultGatewayServices",
            post(reapply_default_services),
        )
}

fn hook_result(result: Result<impl serde::Serialize, HookError>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(error @ HookError::NotFound { .. }) => {
            (StatusCode::NOT_FOUND, error.to_string()).into_response()
        }
        Err(error) => (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
    }
}

async fn dump_state(State(state): State<AppState>) -> Response {
    Json(serde_json::to_value(&*state.world()).unwrap_or_default()).into_response()
}

async fn get_knobs(State(state): State<AppState>) -> Json<Knobs> {
    Json(state.knobs())
}

async fn put_knobs(State(state): State<AppState>, Json(knobs): Json<Knobs>) -> Json<Knobs> {
    *state.knobs_mut() = knobs.clone();
    Json(knobs)
}

async fn requests(State(state): State<AppState>) -> Response {
    (
        [("content-type", "application/x-ndjson")],
        state.log().jsonl(),
    )
        .into_response()
}

async fn counters(State(state): State<AppState>) -> Response {
    Json(json!(state.log().counters)).into_response()
}

async fn reset_log(State(state): State<AppState>) -> StatusCode {
    state.log().reset();
    StatusCode::NO_CONTENT
}

async fn list_faults(State(state): State<AppState>) -> Json<Vec<FaultRule>> {
    Json(state.faults().rules.clone())
}

async fn add_fault(State(state): State<AppState>, Json(rule): Json<FaultRule>) -> StatusCode {
    state.faults().rules.push(rule);
    StatusCode::CREATED
}

async fn clear_faults(State(state): State<AppState>) -> StatusCode {
    state.faults().rules.clear();
    StatusCode::NO_CONTENT
}

#[derive(Deserialize)]
struct PowerChange {
    state: PowerState,
}

async fn set_power(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(change): Json<PowerChange>,
) -> Response {
    hook_result(state.world().set_vm_power(&id, change.state))
}

async fn remove_vm(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    hook_result(state.world().remove_vm(&id))
}

async fn add_vm(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(spec): Json<VmSpec>,
) -> Response {
    hook_result(
        state
            .world()
            .add_vm(&id, &spec)
            .map(|id| json!({ "id": id })),
    )
}

#[derive(Deserialize)]
struct HealthChange {
    health: String,
}

async fn set_member_health(
    State(state): State<AppState>,
    Path((id, ip)): Path<(String, String)>,
    Json(change): Json<HealthChange>,
) -> Response {
    hook_result(state.world().set_member_health(&id, &ip, &change.health))
}

#[derive(Deserialize)]
struct ProbeOutcome {
    healthy: bool,
}

async fn set_probe(
    State(state): State<AppState>,
    Path((ip, port)): Path<(String, u16)>,
    Json(outcome): Json<ProbeOutcome>,
) -> Response {
    state.world().set_probe(&ip, port, outcome.healthy);
    Json(json!({"ip": ip, "port": port, "healthy": outcome.healthy})).into_response()
}

#[derive(Deserialize)]
struct Switch {
    enabled: bool,
}

async fn set_transparent_mode(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(switch): Json<Switch>,
) -> Response {
    hook_result(state.world().set_transparent_mode(&id, switch.enabled))
}

/// Re-applies VCD's default gateway services to the gateway, as VCD does.
async fn reapply_default_services(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Response {
    hook_result(crate::world::default_services::apply(
        &mut state.world(),
        &id,
    ))
}

#[derive(Deserialize)]
struct Revocation {
    token: String,
}

async fn revoke_token(
    State(state): State<AppState>,
    Json(revocation): Json<Revocation>,
) -> Response {
    hook_result(state.world().revoke_token(&revocation.token))
}

//! Asynchronous operations. A write is checked at once (so cheap failures
//! answer 400 before any 202), marks its gateway busy, and becomes a task:
//! `queued` for the first third of its duration, `running` for the rest,
//! then its effect is applied (checked again against the world of that
//! moment) and the task ends in `success` or `error`.

use std::time::{Duration, Instant, SystemTime};

use crate::auth::Principal;
use crate::context;
use crate::error::{ApiError, ApiResult};
use crate::faults::TaskFailure;
use crate::ids::{new_uuid, uuid_of};
use crate::knobs::BusyMode;
use crate::state::AppState;
use crate::world::network::BusyMark;
use crate::world::task::{Task, TaskError, TaskOwner, TaskStatus};
use crate::world::{World, find_mut};

/// What a task does when it completes; `Ok` carries the optional
/// `Result/ResultContent` text.
pub type Effect = Box<dyn FnOnce(&mut World) -> ApiResult<Option<String>> + Send>;

pub struct TaskRequest {
    /// E.g. `createLoadBalancerPool`: the key of per-operation durations.
    pub operation_name: &'static str,
    pub operation: String,
    /// Gateway-scoped writes serialise on the gateway (`BUSY_ENTITY`).
    pub gateway_id: Option<String>,
    pub owner: TaskOwner,
    pub org_id: String,
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// Checks, reserves the gateway, records the task and schedules its
/// effect. Returns the task id.
pub async fn submit(
    state: &AppState,
    principal: &Principal,
    request: TaskRequest,
    check: impl Fn(&World) -> ApiResult<()>,
    effect: Effect,
) -> ApiResult<String> {
    let knobs = state.knobs();
    let task_id = new_uuid();
    let deadline = Instant::now() + Duration::from_millis(knobs.queue_timeout_ms);
    loop {
        {
            let mut world = state.world();
            check(&world)?;
            match reserve_gateway(&mut world, &request, &task_id) {
                Ok(()) => {
                    let org = world.org_ref(&request.org_id);
                    world.tasks.push(Task {
                        id: task_id.clone(),
                        operation_name: request.operation_name.to_string(),
                        operation: request.operation.clone(),
                        status: TaskStatus::Queued,
                        org,
                        user: principal.user.clone(),
                        owner: request.owner.clone(),
                        error: None,
                        result: None,
                        start_time: now_rfc3339(),
                        end_time: None,
                    });
                    break;
                }
                Err(busy) if knobs.busy_mode == BusyMode::Reject || Instant::now() >= deadline => {
                    return Err(busy);
                }
                Err(_) => {}
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let failure = context::current().fail_task.map(|f| (*f).clone());
    let duration = knobs.task_duration(request.operation_name);
    let cooldown = Duration::from_millis(knobs.busy_cooldown_ms);
    if duration.is_zero() {
        complete(
            state,
            &task_id,
            request.gateway_id.as_deref(),
            cooldown,
            failure,
            effect,
        );
    } else {
        let state = state.clone();
        let id = task_id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(duration / 3).await;
            if let Some(task) = find_mut(&mut state.world().tasks, &id) {
                task.status = TaskStatus::Running;
            }
            tokio::time::sleep(duration - duration / 3).await;
            complete(
                &state,
                &id,
                request.gateway_id.as_deref(),
                cooldown,
                failure,
                effect,
            );
        });
    }
    Ok(task_id)
}

fn reserve_gateway(world: &mut World, request: &TaskRequest, task_id: &str) -> ApiResult<()> {
    let Some(gateway_id) = &request.gateway_id else {
        return Ok(());
    };
    let gateway = find_mut(&mut world.gateways, gateway_id).ok_or_else(|| {
        ApiError::bad_request(format!("Edge gateway {gateway_id} does not exist."))
    })?;
    if let Some(mark) = gateway.busy.as_ref().filter(|m| m.active(Instant::now())) {
        return Err(ApiError::busy(uuid_of(&gateway.id), &mark.operation));
    }
    gateway.busy = Some(BusyMark {
        operation: busy_operation(request.operation_name),
        task_id: task_id.to_string(),
        until: None,
    });
    Ok(())
}

/// VCD names the operation in upper snake case, e.g. `EDGE_GATEWAY_UPDATE`-like.
fn busy_operation(operation_name: &str) -> String {
    let mut out = String::new();
    for c in operation_name.chars() {
        if c.is_uppercase() && !out.is_empty() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn complete(
    state: &AppState,
    task_id: &str,
    gateway_id: Option<&str>,
    cooldown: Duration,
    failure: Option<TaskFailure>,
    effect: Effect,
) {
    let mut world = state.world();
    let outcome = match failure {
        Some(f) => Err(ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            &f.minor,
            f.message,
        )),
        None => effect(&mut world),
    };
    if let Some(gateway) = gateway_id.and_then(|id| find_mut(&mut world.gateways, id)) {
        gateway.busy = if cooldown.is_zero() {
            None
        } else {
            gateway.busy.take().map(|mark| BusyMark {
                until: Some(Instant::now() + cooldown),
                ..mark
            })
        };
    }
    if let Some(task) = find_mut(&mut world.tasks, task_id) {
        task.end_time = Some(now_rfc3339());
        match outcome {
            Ok(result) => {
                task.status = TaskStatus::Success;
                task.result = result;
            }
            Err(error) => {
                task.status = TaskStatus::Error;
                task.error = Some(TaskError {
                    status: error.status.as_u16(),
                    minor: error.minor,
                    message: error.message,
                });
            }
        }
    }
}

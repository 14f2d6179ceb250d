//! IP Space allocations: allocate (an async task whose `Result` lists the
//! IPs; quota and exhaustion end it in error), list, claim and release.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::collection::{Collection, Sublist, list_within};
use super::ip_spaces::{IpSpaces, acting_org};
use super::task_writes::{submit_checked, task_owner};
use super::{Params, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::new_urn;
use crate::paging::Sort;
use crate::respond;
use crate::state::AppState;
use crate::strict::{ReadOnly, definition};
use crate::tasks::{self, TaskRequest, now_rfc3339};
use crate::world::ip_space::{ClaimedUsage, IpAllocation};
use crate::world::{Ref, World, find, find_mut, remove};

pub fn routes() -> Router<AppState> {
    let base = "/cloudapi/1.0.0/ipSpaces";
    Router::new()
        .route(&format!("{base}/{{id}}/allocate"), post(allocate))
        .route(&format!("{base}/{{id}}/allocations"), get(list_allocations))
        .route(
            &format!("{base}/{{id}}/allocations/{{allocation}}"),
            get(get_allocation)
                .put(put_allocation)
                .delete(delete_allocation),
        )
}

fn allocation_view(world: &World, allocation: &IpAllocation) -> Value {
    let usage = world.allocation_use(allocation);
    json!({
        "id": allocation.id,
        "type": "FLOATING_IP",
        "value": allocation.value.to_string(),
        "allocationDate": allocation.allocation_date,
        "orgRef": world.org_ref(&allocation.org_id),
        "usageState": usage.state,
        "description": allocation.description,
        "usedByRef": usage.used_by,
        "usageCategories": usage.categories,
    })
}

#[derive(Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct AllocateRequest {
    #[serde(rename = "type")]
    allocation_type: String,
    quantity: Option<u32>,
    value: Option<String>,
    /// For `IP_PREFIX`, which is refused.
    #[serde(rename = "prefixLength")]
    _prefix_length: Option<u32>,
}
definition!(AllocateRequest, "IpSpaceIpAllocationRequest");

async fn allocate(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let request: AllocateRequest = parse_body(&body)?;
    if request.allocation_type != "FLOATING_IP" {
        return Err(ApiError::bad_request(format!(
            "Allocation type {} is not supported by this IP Space.",
            request.allocation_type
        )));
    }
    let org_id = acting_org(&principal)?;
    let wanted = request
        .value
        .as_deref()
        .map(crate::world::ip::parse_ip)
        .transpose()
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let quantity = if wanted.is_some() {
        1
    } else {
        request.quantity.unwrap_or(1)
    };
    if quantity == 0 {
        return Err(ApiError::bad_request("quantity must be at least 1"));
    }
    let (space_id, space_name) = {
        let world = state.world();
        let space = IpSpaces::find_visible(&world, &principal, &id)?;
        (space.id.clone(), space.name.clone())
    };
    let owner = task_owner(format!("/ipSpaces/{space_id}"), &space_id, &space_name);
    let task = TaskRequest {
        operation_name: "ipSpaceIpAllocate",
        operation: format!("Allocating {quantity} floating IP(s) from IP Space {space_name}"),
        gateway_id: None,
        owner,
        org_id: org_id.clone(),
    };
    let effect: tasks::Effect = Box::new(move |world| {
        let space =
            find(&world.ip_spaces, &space_id).ok_or_else(|| ApiError::forbidden(&space_id))?;
        let held = world.org_allocations(&space_id, &org_id).count();
        let quota = space.quota_for(&org_id) as usize;
        if held + quantity as usize > quota {
            return Err(ApiError::bad_request(format!(
                "The floating IP quota ({quota}) of the organization in IP Space {} is exhausted.",
                space.name
            )));
        }
        let taken = |ip| {
            world
                .ip_allocations
                .iter()
                .any(|a| a.space_id == space_id && a.value == ip)
        };
        let chosen: Vec<_> = match wanted {
            Some(ip) if !space.contains(ip) => {
                return Err(ApiError::bad_request(format!(
                    "{ip} is not in IP Space {}.",
                    space.name
                )));
            }
            Some(ip) if taken(ip) => {
                return Err(ApiError::bad_request(format!("{ip} is already allocated.")));
            }
            Some(ip) => vec![ip],
            None => space
                .ranges
                .iter()
                .flat_map(|r| r.range.addresses())
                .filter(|ip| !taken(*ip))
                .take(quantity as usize)
                .collect(),
        };
        if chosen.len() < quantity as usize {
            return Err(ApiError::bad_request(format!(
                "IP Space {} has no free floating IPs left.",
                space.name
            )));
        }
        let mut result = Vec::new();
        for ip in chosen {
            let id = new_urn("ipSpaceIpAllocation");
            result.push(json!({"id": id, "value": ip.to_string(), "suggestedValue": null}));
            world.ip_allocations.push(IpAllocation {
                id,
                space_id: space_id.clone(),
                org_id: org_id.clone(),
                value: ip,
                allocation_date: now_rfc3339(),
                claimed: ClaimedUsage::Unused,
                description: String::new(),
            });
        }
        Ok(Some(Value::Array(result).to_string()))
    });
    let task_id = tasks::submit(&state, &principal, task, |_| Ok(()), effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

async fn list_allocations(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let sublist = Sublist {
        path: format!("/ipSpaces/{id}/allocations"),
        model: "IpSpaceIpAllocations",
        default_sort: Some(Sort {
            field: "allocationDate".to_string(),
            descending: true,
        }),
    };
    list_within::<IpSpaces>(&state, &principal, &id, &params, sublist, |world, space| {
        world
            .ip_allocations
            .iter()
            .filter(|a| a.space_id == space.id && principal.sees(&a.org_id))
            .map(|a| allocation_view(world, a))
            .collect()
    })
}

fn visible_allocation<'a>(
    world: &'a World,
    principal: &Principal,
    space_id: &str,
    id: &str,
) -> ApiResult<&'a IpAllocation> {
    let space = IpSpaces::find_visible(world, principal, space_id)?;
    find(&world.ip_allocations, id)
        .filter(|a| a.space_id == space.id && principal.sees(&a.org_id))
        .ok_or_else(|| ApiError::forbidden(id))
}

async fn get_allocation(
    State(state): State<AppState>,
    principal: Principal,
    Path((space_id, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let world = state.world();
    let allocation = visible_allocation(&world, &principal, &space_id, &id)?;
    Ok(respond::ok(&allocation_view(&world, allocation)))
}

/// `IpSpaceIpAllocation` as PUT: only the usage state and description
/// change; the rest is the allocation as read.
#[derive(Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct AllocationUpdate {
    usage_state: Option<String>,
    description: Option<String>,
    #[serde(default, rename = "id")]
    _id: ReadOnly<String>,
    #[serde(default, rename = "type")]
    _type: ReadOnly<String>,
    #[serde(default, rename = "value")]
    _value: ReadOnly<String>,
    #[serde(default, rename = "allocationDate")]
    _allocation_date: ReadOnly<String>,
    #[serde(default, rename = "orgRef")]
    _org_ref: ReadOnly<Ref>,
    #[serde(default, rename = "usedByRef")]
    _used_by_ref: ReadOnly<Ref>,
    #[serde(default, rename = "usageCategories")]
    _usage_categories: ReadOnly<Vec<String>>,
}
definition!(AllocationUpdate, "IpSpaceIpAllocation");

/// A task on one allocation the principal sees, e.g. `Releasing IP
/// allocation 10.0.0.5`, owned by the allocation; and the allocation's id.
fn allocation_task(
    state: &AppState,
    principal: &Principal,
    (space_id, id): (&str, &str),
    operation_name: &'static str,
    doing: &str,
) -> ApiResult<(TaskRequest, String)> {
    let world = state.world();
    let allocation = visible_allocation(&world, principal, space_id, id)?;
    let href = format!(
        "/ipSpaces/{}/allocations/{}",
        allocation.space_id, allocation.id
    );
    let name = allocation.value.to_string();
    let request = TaskRequest {
        operation_name,
        operation: format!("{doing} IP allocation {name}"),
        gateway_id: None,
        owner: task_owner(href, &allocation.id, &name),
        org_id: allocation.org_id.clone(),
    };
    Ok((request, allocation.id.clone()))
}

async fn put_allocation(
    State(state): State<AppState>,
    principal: Principal,
    Path((space_id, id)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult<Response> {
    let update: AllocationUpdate = parse_body(&body)?;
    let claimed = match update.usage_state.as_deref() {
        Some("USED_MANUAL") => ClaimedUsage::UsedManual,
        Some("UNUSED") | None => ClaimedUsage::Unused,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "usageState {other} cannot be set; use UNUSED or USED_MANUAL."
            )));
        }
    };
    let (task, allocation_id) = allocation_task(
        &state,
        &principal,
        (&space_id, &id),
        "ipSpaceIpAllocationUpdate",
        "Updating",
    )?;
    let apply = move |world: &mut World| {
        let allocation = find_mut(&mut world.ip_allocations, &allocation_id)
            .ok_or_else(|| ApiError::forbidden(&allocation_id))?;
        // Only a manual claim keeps a description.
        allocation.description = match claimed {
            ClaimedUsage::UsedManual => update.description.unwrap_or_default(),
            ClaimedUsage::Unused => String::new(),
        };
        allocation.claimed = claimed;
        Ok(())
    };
    submit_checked(&state, &principal, task, |_| Ok(()), apply).await
}

fn check_releasable(world: &World, allocation_id: &str) -> ApiResult<()> {
    match find(&world.ip_allocations, allocation_id) {
        Some(allocation) if world.allocation_use(allocation).state == "USED" => {
            Err(ApiError::bad_request(format!(
                "IP {} is in use and cannot be released.",
                allocation.value
            )))
        }
        Some(_) => Ok(()),
        None => Err(ApiError::forbidden(allocation_id)),
    }
}

async fn delete_allocation(
    State(state): State<AppState>,
    principal: Principal,
    Path((space_id, id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let (task, allocation_id) = allocation_task(
        &state,
        &principal,
        (&space_id, &id),
        "ipSpaceIpAllocationDelete",
        "Releasing",
    )?;
    let check_id = allocation_id.clone();
    let apply = move |world: &mut World| {
        remove(&mut world.ip_allocations, &allocation_id);
        Ok(())
    };
    submit_checked(
        &state,
        &principal,
        task,
        move |w| check_releasable(w, &check_id),
        apply,
    )
    .await
}

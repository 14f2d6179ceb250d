//! The legacy `/api` endpoints in their JSON form: orgs, VDCs, the VM query,
//! vApps and VMs, and tasks.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::Params;
use super::collection::Collection;
use super::orgs::{Orgs, Vdcs};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{same_id, urn, uuid_of};
use crate::paging::{ListParams, STANDARD};
use crate::respond;
use crate::state::AppState;
use crate::world::compute::{PowerState, VApp, Vm};
use crate::world::{World, find};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/org", get(org_list))
        .route("/api/org/{id}", get(get_org))
        .route("/api/vdc/{id}", get(get_vdc))
        .route("/api/query", get(query))
        .route("/api/vApp/{reference}", get(get_vapp_or_vm))
        .route("/api/task/{id}", get(get_task))
}

/// The wording clients grep for to decide that a VM is gone.
fn vm_forbidden(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "ACCESS_TO_RESOURCE_IS_FORBIDDEN",
        format!(
            "Either you need some or all of the following rights [Base] to perform operations [VAPP_VM_VIEW] for {} or the target entity is invalid.",
            urn("vm", uuid_of(id))
        ),
    )
}

fn link(rel: &str, media: &str, href: String, name: Option<&str>) -> Value {
    json!({"rel": rel, "type": format!("application/vnd.vmware.vcloud.{media}+json"), "href": href, "name": name})
}

async fn org_list(State(state): State<AppState>, principal: Principal) -> Response {
    let orgs: Vec<Value> = state
        .world()
        .orgs
        .iter()
        .filter(|o| principal.sees(&o.id) && (principal.sysadmin || !o.is_system()))
        .map(|o| {
            json!({"href": state.api_url(&format!("/org/{}", uuid_of(&o.id))), "name": o.name, "type": "application/vnd.vmware.vcloud.org+json"})
        })
        .collect();
    respond::legacy("orgList", &json!({ "org": orgs }))
}

async fn get_org(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let org = Orgs::find_visible(&world, &principal, &id)?;
    let links: Vec<Value> = world
        .vdcs
        .iter()
        .filter(|v| v.org_id == org.id)
        .map(|v| {
            link(
                "down",
                "vdc",
                state.api_url(&format!("/vdc/{}", uuid_of(&v.id))),
                Some(&v.name),
            )
        })
        .collect();
    Ok(respond::legacy(
        "org",
        &json!({
            "href": state.api_url(&format!("/org/{}", uuid_of(&org.id))),
            "id": org.id,
            "name": org.name,
            "type": "application/vnd.vmware.vcloud.org+json",
            "fullName": org.full_name,
            "description": "",
            "isEnabled": org.enabled,
            "link": links,
        }),
    ))
}

async fn get_vdc(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let vdc = Vdcs::find_visible(&world, &principal, &id)?;
    Ok(respond::legacy(
        "vdc",
        &json!({
            "href": state.api_url(&format!("/vdc/{}", uuid_of(&vdc.id))),
            "id": vdc.id,
            "name": vdc.name,
            "type": "application/vnd.vmware.vcloud.vdc+json",
            "allocationModel": vdc.allocation_type,
            "link": [link("up", "org", state.api_url(&format!("/org/{}", uuid_of(&vdc.org_id))), None)],
        }),
    ))
}

fn vm_href(state: &AppState, vm: &Vm) -> String {
    state.api_url(&format!("/vApp/vm-{}", uuid_of(&vm.id)))
}

fn vapp_href(state: &AppState, vapp_id: &str) -> String {
    state.api_url(&format!("/vApp/vapp-{}", uuid_of(vapp_id)))
}

fn vm_record(state: &AppState, world: &World, vm: &Vm) -> Value {
    let vapp = find(&world.vapps, &vm.vapp_id);
    let vdc = vapp.and_then(|a| find(&world.vdcs, &a.vdc_id));
    json!({
        "_type": "QueryResultVMRecordType",
        "name": vm.name,
        "href": vm_href(state, vm),
        "containerName": vapp.map(|a| a.name.clone()),
        "container": vapp_href(state, &vm.vapp_id),
        "vdc": vdc.map(|v| state.api_url(&format!("/vdc/{}", uuid_of(&v.id)))),
        "vdcName": vdc.map(|v| v.name.clone()),
        "isVAppTemplate": false,
        "isDeployed": vm.power == PowerState::PoweredOn,
        "isBusy": false,
        "status": vm.power.label(),
        "ipAddress": vm.primary_ip(),
        "networkName": vm.nics.get(vm.primary_nic).map(|n| n.network.clone()),
        "guestOs": vm.guest_os,
        "numberOfCpus": vm.cpus,
        "memoryMB": vm.memory_mb,
    })
}

/// `GET /api/query?type=vm|adminVM` with FIQL filter and paging; `id==`
/// accepts a URN or a bare UUID.
async fn query(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let query_type = params.0.get("type").map(String::as_str).unwrap_or_default();
    match query_type {
        "vm" => {}
        "adminVM" => principal.require_provider()?,
        other => {
            return Err(ApiError::bad_request(format!(
                "Query type '{other}' is not supported."
            )));
        }
    }
    let mut list_params = ListParams::parse(&params.0, STANDARD)?;
    let (wanted_id, rest) = match list_params.filter.take() {
        Some(filter) => filter.take_equality("id"),
        None => (None, None),
    };
    list_params.filter = rest;
    let records: Vec<Value> = {
        let world = state.world();
        world
            .vms
            .iter()
            .filter(|vm| world.vm_org(vm).is_some_and(|org| principal.sees(org)))
            .filter(|vm| wanted_id.as_deref().is_none_or(|id| same_id(&vm.id, id)))
            .map(|vm| vm_record(&state, &world, vm))
            .collect()
    };
    let records = list_params.select(records, None);
    let total = records.len();
    let size = list_params.page_size as usize;
    let start = (list_params.page as usize - 1).saturating_mul(size);
    let page: Vec<Value> = records.into_iter().skip(start).take(size).collect();
    let mut links = Vec::new();
    if start + size < total {
        let href = state.api_url(&format!(
            "/query?type={query_type}&page={}&pageSize={size}",
            list_params.page + 1
        ));
        links.push(link("nextPage", "query.records", href, None));
    }
    let record_type = if query_type == "adminVM" {
        "QueryResultAdminVMRecordType"
    } else {
        "QueryResultVMRecordType"
    };
    let page: Vec<Value> = page
        .into_iter()
        .map(|mut r| {
            r["_type"] = json!(record_type);
            r
        })
        .collect();
    Ok(respond::legacy(
        "query.records",
        &json!({
            "name": query_type,
            "type": "application/vnd.vmware.vcloud.query.records+json",
            "href": state.api_url(&format!("/query?type={query_type}")),
            "page": list_params.page,
            "pageSize": size,
            "total": total,
            "link": links,
            "record": page,
        }),
    ))
}

fn vm_body(state: &AppState, vm: &Vm) -> Value {
    let href = vm_href(state, vm);
    let connections: Vec<Value> = vm
        .nics
        .iter()
        .enumerate()
        .map(|(index, nic)| {
            json!({
                "network": nic.network,
                "needsCustomization": false,
                "networkConnectionIndex": index,
                "ipAddress": nic.ip,
                "ipType": "IPV4",
                "isConnected": nic.connected,
                "macAddress": nic.mac,
                "ipAddressAllocationMode": "POOL",
                "networkAdapterType": "VMXNET3",
            })
        })
        .collect();
    json!({
        "href": href,
        "id": vm.id,
        "name": vm.name,
        "type": "application/vnd.vmware.vcloud.vm+json",
        "status": vm.power.code(),
        "deployed": vm.power == PowerState::PoweredOn,
        "link": [link("up", "vApp", vapp_href(state, &vm.vapp_id), None)],
        "section": [{
            "_type": "NetworkConnectionSectionType",
            "href": format!("{href}/networkConnectionSection/"),
            "type": "application/vnd.vmware.vcloud.networkConnectionSection+json",
            "info": {"value": "Specifies the available VM network connections"},
            "primaryNetworkConnectionIndex": vm.primary_nic,
            "networkConnection": connections,
        }, {
            "_type": "GuestCustomizationSectionType",
            "href": format!("{href}/guestCustomizationSection/"),
            "type": "application/vnd.vmware.vcloud.guestCustomizationSection+json",
            "enabled": true,
            "computerName": vm.computer_name,
        }],
        "computePolicy": {
            "vmSizingPolicy": vm.sizing_policy.as_ref().map(|policy| json!({
                "href": format!("{}/cloudapi/2.0.0/vdcComputePolicies/{}", state.base_url, policy.id),
                "id": policy.id,
                "name": policy.name,
                "type": "application/json",
            })),
        },
        "vmSpecSection": {
            "numCpus": vm.cpus,
            "memoryResourceMb": {"configured": vm.memory_mb},
        },
        "guestOs": vm.guest_os,
    })
}

fn vapp_body(state: &AppState, world: &World, vapp: &VApp) -> Value {
    let vms: Vec<&Vm> = world
        .vms
        .iter()
        .filter(|vm| vm.vapp_id == vapp.id)
        .collect();
    let any_on = vms.iter().any(|vm| vm.power == PowerState::PoweredOn);
    let status = if any_on {
        PowerState::PoweredOn
    } else {
        PowerState::PoweredOff
    };
    json!({
        "href": vapp_href(state, &vapp.id),
        "id": vapp.id,
        "name": vapp.name,
        "type": "application/vnd.vmware.vcloud.vApp+json",
        "status": status.code(),
        "deployed": any_on,
        "link": [link("up", "vdc", state.api_url(&format!("/vdc/{}", uuid_of(&vapp.vdc_id))), None)],
        "children": {"vm": vms.iter().map(|vm| vm_body(state, vm)).collect::<Vec<_>>()},
    })
}

/// `/api/vApp/vm-<uuid>` or `/api/vApp/vapp-<uuid>`.
async fn get_vapp_or_vm(
    State(state): State<AppState>,
    principal: Principal,
    Path(reference): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    if let Some(uuid) = reference.strip_prefix("vm-") {
        let vm = find(&world.vms, uuid)
            .filter(|vm| world.vm_org(vm).is_some_and(|org| principal.sees(org)))
            .ok_or_else(|| vm_forbidden(uuid))?;
        return Ok(respond::legacy("vm", &vm_body(&state, vm)));
    }
    if let Some(uuid) = reference.strip_prefix("vapp-") {
        let vapp = find(&world.vapps, uuid)
            .filter(|a| world.vapp_org(a).is_some_and(|org| principal.sees(org)))
            .ok_or_else(|| ApiError::forbidden(&urn("vapp", uuid)))?;
        return Ok(respond::legacy("vApp", &vapp_body(&state, &world, vapp)));
    }
    Err(ApiError::forbidden(&reference))
}

async fn get_task(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    let task = find(&world.tasks, &id)
        .filter(|t| principal.sees(&t.org.id))
        .ok_or_else(|| ApiError::forbidden(&urn("task", uuid_of(&id))))?;
    let href = state.api_url(&format!("/task/{}", task.id));
    let error = task.error.as_ref().map(|e| {
        json!({"majorErrorCode": e.status, "minorErrorCode": e.minor, "message": e.message, "stackTrace": null})
    });
    let result = task.result.as_ref().map(|r| json!({"resultContent": r}));
    let progress = if task.end_time.is_some() { 100 } else { 0 };
    Ok(respond::legacy(
        "task",
        &json!({
            "href": href,
            "id": urn("task", &task.id),
            "type": "application/vnd.vmware.vcloud.task+json",
            "name": "task",
            "operationName": task.operation_name,
            "operation": task.operation,
            "status": task.status.label(),
            "serviceNamespace": "com.vmware.cloud",
            "startTime": task.start_time,
            "endTime": task.end_time,
            "cancelRequested": false,
            "owner": {
                "href": state.cloudapi_url(&task.owner.href_path),
                "id": task.owner.id,
                "name": task.owner.name,
                "type": task.owner.media_type,
            },
            "error": error,
            "user": task.user,
            "organization": {
                "href": state.api_url(&format!("/org/{}", uuid_of(&task.org.id))),
                "id": task.org.id,
                "name": task.org.name,
            },
            "progress": progress,
            "details": "",
            "result": result,
        }),
    ))
}

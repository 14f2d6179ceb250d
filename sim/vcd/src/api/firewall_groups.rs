//! Firewall groups: IP sets owned by an edge gateway (`typeValue: IP_SET`,
//! the spec's default; static-member and VM-criteria groups are not
//! modelled and are refused). Entries are checked, names are unique per
//! owner, the owner never changes, and a group a firewall rule or a pool
//! names cannot be deleted. Writes are gateway-scoped tasks.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::gateways::visible_gateway;
use super::{Params, context_params, list_parsed, parse_body};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::paging::STANDARD;
use crate::respond;
use crate::state::AppState;
use crate::tasks::{self, TaskRequest};
use crate::world::firewall::{FirewallGroup, FirewallGroupBody};
use crate::world::task::TaskOwner;
use crate::world::{Ref, World, find, find_mut, remove};

const GROUPS: &str = "/cloudapi/1.0.0/firewallGroups";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(GROUPS, post(create_group))
        .route(&format!("{GROUPS}/summaries"), get(list_groups))
        .route(
            &format!("{GROUPS}/{{id}}"),
            get(get_group).put(update_group).delete(delete_group),
        )
}

fn summary(group: &FirewallGroup) -> Value {
    let mut view = detail(group);
    if let Some(map) = view.as_object_mut() {
        for field in ["ipAddresses", "members", "vmCriteria"] {
            map.remove(field);
        }
    }
    view
}

fn detail(group: &FirewallGroup) -> Value {
    let mut body = group.body.clone();
    body.status = Some("REALIZED".into());
    body.type_value.get_or_insert_with(|| "IP_SET".into());
    body.group_type = body.type_value.clone();
    json!(body)
}

/// The group as stored: owned by `gateway` of `org`, references named.
fn owned(
    world: &World,
    mut group: FirewallGroupBody,
    gateway_id: &str,
    org_id: &str,
) -> FirewallGroupBody {
    group.owner_ref = Some(world.gateway_ref(gateway_id));
    group.org_ref = Some(world.org_ref(org_id));
    group
}

/// One address, range (`a-b`) or CIDR of either family.
fn valid_entry(entry: &str) -> bool {
    let address = |a: &str| a.trim().parse::<std::net::IpAddr>().ok();
    if let Some((first, last)) = entry.split_once('-') {
        return matches!((address(first), address(last)), (Some(a), Some(b)) if a.is_ipv4() == b.is_ipv4() && a <= b);
    }
    if let Some((ip, prefix)) = entry.split_once('/') {
        let max = match address(ip) {
            Some(std::net::IpAddr::V4(_)) => 32,
            Some(std::net::IpAddr::V6(_)) => 128,
            None => return false,
        };
        return prefix.parse::<u8>().is_ok_and(|p| p <= max);
    }
    address(entry).is_some()
}

/// The group's gateway, checked as VCD checks a write.
fn validate(world: &World, group: &FirewallGroupBody, id: Option<&str>) -> ApiResult<String> {
    let kind = group
        .type_value
        .as_deref()
        .or(group.group_type.as_deref())
        .unwrap_or("IP_SET");
    if kind != "IP_SET" {
        return Err(ApiError::bad_request(format!(
            "Firewall group type {kind} is not supported here; vcdsim models IP_SET groups."
        )));
    }
    // The spec: members are for static-member groups, criteria for VM ones.
    let members = group.members.as_ref().is_some_and(|m| !m.is_empty());
    let criteria = group.vm_criteria.as_ref().is_some_and(|c| !c.is_empty());
    if members || criteria {
        return Err(ApiError::bad_request(
            "An IP_SET firewall group holds ipAddresses, not members or vmCriteria.",
        ));
    }
    let owner = group
        .owner_ref
        .as_ref()
        .or(group.edge_gateway_ref.as_ref())
        .ok_or_else(|| ApiError::bad_request("A firewall group needs an ownerRef."))?;
    let gateway = find(&world.gateways, &owner.id).ok_or_else(|| {
        ApiError::bad_request(format!("Owner {} is not an edge gateway.", owner.id))
    })?;
    if group.name.trim().is_empty() {
        return Err(ApiError::bad_request("A firewall group needs a name."));
    }
    if let Some(bad) = group
        .ip_addresses
        .iter()
        .flatten()
        .find(|e| !valid_entry(e))
    {
        return Err(ApiError::bad_request(format!(
            "Invalid IP address, range or CIDR '{bad}' in firewall group {}.",
            group.name
        )));
    }
    let taken = world.firewall_groups.iter().any(|g| {
        g.gateway_id == gateway.id
            && g.body.name == group.name
            && id.is_none_or(|id| !same_id(g.body.id.as_deref().unwrap_or_default(), id))
    });
    if taken {
        return Err(ApiError::duplicate_name(
            "firewall group",
            &group.name,
            &format!("edge gateway {}", gateway.name),
        ));
    }
    Ok(gateway.id.clone())
}

fn owner(id: &str, name: &str) -> TaskOwner {
    TaskOwner {
        id: id.to_string(),
        name: name.to_string(),
        href_path: format!("/firewallGroups/{id}"),
        media_type: "application/json".to_string(),
    }
}

async fn create_group(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let mut group: FirewallGroupBody = parse_body(&body)?;
    let (gateway_id, org_id) = {
        let world = state.world();
        let gateway_id = validate(&world, &group, None)?;
        let gateway = visible_gateway(&world, &principal, &gateway_id)?;
        (gateway.id.clone(), gateway.org_id.clone())
    };
    let id = new_urn("firewallGroup");
    group.id = Some(id.clone());
    group = owned(&state.world(), group, &gateway_id, &org_id);
    let request = TaskRequest {
        operation_name: "createFirewallGroup",
        operation: format!("Creating firewall group {}", group.name),
        gateway_id: Some(gateway_id.clone()),
        owner: owner(&id, &group.name),
        org_id: org_id.clone(),
    };
    let check_group = group.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &group, None)?;
        world.firewall_groups.push(FirewallGroup {
            gateway_id,
            org_id,
            body: group,
        });
        Ok(None)
    });
    let check = move |w: &World| validate(w, &check_group, None).map(drop);
    let task_id = tasks::submit(&state, &principal, request, check, effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

fn visible_group<'a>(
    world: &'a World,
    principal: &Principal,
    id: &str,
) -> ApiResult<&'a FirewallGroup> {
    let group = find(&world.firewall_groups, id)
        .ok_or_else(|| ApiError::not_found(&format!("firewall group {id}")))?;
    principal.check(Some(&group.org_id), id)?;
    Ok(group)
}

/// `_context==<edge gateway id>` keeps the groups available to that
/// gateway: its own (a network or provider context matches none here).
async fn list_groups(
    State(state): State<AppState>,
    principal: Principal,
    params: Params,
) -> ApiResult<Response> {
    let (list_params, context) = context_params(&params, STANDARD)?;
    let items: Vec<Value> = {
        let world = state.world();
        world
            .firewall_groups
            .iter()
            .filter(|g| principal.check(Some(&g.org_id), "").is_ok())
            .filter(|g| context.as_deref().is_none_or(|c| same_id(&g.gateway_id, c)))
            .map(summary)
            .collect()
    };
    Ok(list_parsed(
        &state,
        "/firewallGroups/summaries",
        &list_params,
        items,
        None,
        "FirewallGroups",
    ))
}

async fn get_group(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let world = state.world();
    Ok(respond::ok(&detail(visible_group(
        &world, &principal, &id,
    )?)))
}

async fn update_group(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut group: FirewallGroupBody = parse_body(&body)?;
    let (gateway_id, org_id, id) = {
        let world = state.world();
        let existing = visible_group(&world, &principal, &id)?;
        let owner = group.owner_ref.as_ref().or(group.edge_gateway_ref.as_ref());
        if owner.is_some_and(|o| !same_id(&existing.gateway_id, &o.id)) {
            return Err(ApiError::bad_request(
                "A firewall group cannot move to another owner.",
            ));
        }
        (
            existing.gateway_id.clone(),
            existing.org_id.clone(),
            existing.body.id.clone().unwrap_or_default(),
        )
    };
    group.id = Some(id.clone());
    group = owned(&state.world(), group, &gateway_id, &org_id);
    let request = TaskRequest {
        operation_name: "updateFirewallGroup",
        operation: format!("Updating firewall group {}", group.name),
        gateway_id: Some(gateway_id),
        owner: owner(&id, &group.name),
        org_id,
    };
    let (check_group, check_id) = (group.clone(), id.clone());
    let effect: tasks::Effect = Box::new(move |world| {
        validate(world, &group, Some(&id))?;
        let slot = find_mut(&mut world.firewall_groups, &id)
            .ok_or_else(|| ApiError::not_found("firewall group"))?;
        slot.body = group;
        Ok(None)
    });
    let check = move |w: &World| validate(w, &check_group, Some(&check_id)).map(drop);
    let task_id = tasks::submit(&state, &principal, request, check, effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

/// A group a firewall rule or a pool names cannot go (400, as VCD).
fn not_in_use(world: &World, id: &str) -> ApiResult<()> {
    let names = |g: &Ref| same_id(id, &g.id) || same_id(&g.id, id);
    let rule = world
        .firewall_rules
        .iter()
        .find(|r| r.body.groups().any(names))
        .map(|r| format!("firewall rule {}", r.body.name));
    let pool = || {
        world
            .pools
            .iter()
            .find(|p| p.member_group_ref.as_ref().is_some_and(names))
            .map(|p| format!("load balancer pool {}", p.name))
    };
    match rule.or_else(pool) {
        Some(user) => Err(ApiError::bad_request(format!(
            "The firewall group is in use by {user} and cannot be deleted."
        ))),
        None => Ok(()),
    }
}

async fn delete_group(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let (gateway_id, org_id, id, name) = {
        let world = state.world();
        let existing = visible_group(&world, &principal, &id)?;
        (
            existing.gateway_id.clone(),
            existing.org_id.clone(),
            existing.body.id.clone().unwrap_or_default(),
            existing.body.name.clone(),
        )
    };
    let request = TaskRequest {
        operation_name: "deleteFirewallGroup",
        operation: format!("Deleting firewall group {name}"),
        gateway_id: Some(gateway_id),
        owner: owner(&id, &name),
        org_id,
    };
    let check_id = id.clone();
    let effect: tasks::Effect = Box::new(move |world| {
        not_in_use(world, &id)?;
        remove(&mut world.firewall_groups, &id);
        Ok(None)
    });
    let check = move |w: &World| not_in_use(w, &check_id);
    let task_id = tasks::submit(&state, &principal, request, check, effect).await?;
    Ok(respond::accepted(&state, &task_id))
}

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

use super::collection::{Collection, InContext, Listed, get_item, list_items_in_context};
use super::gateways::Gateways;
use super::parse_body;
use super::task_writes::{Operations, Placement, Writable, create, delete_item, replace};
use crate::auth::Principal;
use crate::error::{ApiError, ApiResult};
use crate::ids::{new_urn, same_id};
use crate::paging::Sort;
use crate::state::AppState;
use crate::world::firewall::{FirewallGroup, FirewallGroupBody};
use crate::world::{Keyed, Ref, World, find};

const GROUPS: &str = "/cloudapi/1.0.0/firewallGroups";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(GROUPS, post(create_group))
        .route(
            &format!("{GROUPS}/summaries"),
            get(list_items_in_context::<FirewallGroups>),
        )
        .route(
            &format!("{GROUPS}/{{id}}"),
            get(get_item::<FirewallGroups>)
                .put(update_group)
                .delete(delete_item::<FirewallGroups>),
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

pub(super) struct FirewallGroups;

impl Collection for FirewallGroups {
    type Item = FirewallGroup;

    fn all(world: &World) -> &[FirewallGroup] {
        &world.firewall_groups
    }

    fn visible(_world: &World, principal: &Principal, group: &FirewallGroup) -> bool {
        principal.sees(&group.org_id)
    }

    fn view(_world: &World, group: &FirewallGroup) -> Value {
        detail(group)
    }

    fn missing(id: &str) -> ApiError {
        ApiError::not_found(&format!("firewall group {id}"))
    }
}

impl Listed for FirewallGroups {
    const LIST_PATH: &'static str = "/firewallGroups/summaries";
    const MODEL: &'static str = "FirewallGroups";

    fn default_sort() -> Option<Sort> {
        None
    }

    fn list_view(_world: &World, group: &FirewallGroup) -> Value {
        summary(group)
    }
}

/// `_context==<edge gateway id>` keeps the groups available to that
/// gateway: its own (a network or provider context matches none here).
impl InContext for FirewallGroups {
    fn in_context(_world: &World, context: &str, group: &FirewallGroup) -> bool {
        same_id(&group.gateway_id, context)
    }
}

impl Writable for FirewallGroups {
    const NOUN: &'static str = "firewall group";
    const PATH: &'static str = "/firewallGroups";
    const OPERATIONS: Operations = Operations {
        create: "createFirewallGroup",
        update: "updateFirewallGroup",
        delete: "deleteFirewallGroup",
    };

    fn all_mut(world: &mut World) -> &mut Vec<FirewallGroup> {
        &mut world.firewall_groups
    }

    fn name(group: &FirewallGroup) -> &str {
        &group.body.name
    }

    fn placement(_world: &World, _principal: &Principal, group: &FirewallGroup) -> Placement {
        Placement {
            gateway_id: Some(group.gateway_id.clone()),
            org_id: group.org_id.clone(),
        }
    }

    fn gone(_id: &str) -> ApiError {
        ApiError::not_found("firewall group")
    }

    /// A group a firewall rule or a pool names cannot go (400, as VCD).
    fn check_removable(world: &World, group: &FirewallGroup) -> ApiResult<()> {
        let id = group.key();
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
}

async fn create_group(
    State(state): State<AppState>,
    principal: Principal,
    body: Bytes,
) -> ApiResult<Response> {
    let mut body: FirewallGroupBody = parse_body(&body)?;
    let (gateway_id, org_id) = {
        let world = state.world();
        let gateway_id = validate(&world, &body, None)?;
        let gateway = Gateways::find_visible(&world, &principal, &gateway_id)?;
        (gateway.id.clone(), gateway.org_id.clone())
    };
    body.id = Some(new_urn("firewallGroup"));
    let (group, placement) = stored(&state, &principal, body, gateway_id, org_id);
    let checked = group.body.clone();
    let check = move |w: &World| validate(w, &checked, None).map(drop);
    create::<FirewallGroups>(&state, &principal, group, placement, check).await
}

async fn update_group(
    State(state): State<AppState>,
    principal: Principal,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Response> {
    let mut body: FirewallGroupBody = parse_body(&body)?;
    let (gateway_id, org_id, id) = {
        let world = state.world();
        let existing = FirewallGroups::find_visible(&world, &principal, &id)?;
        let owner = body.owner_ref.as_ref().or(body.edge_gateway_ref.as_ref());
        if owner.is_some_and(|o| !same_id(&existing.gateway_id, &o.id)) {
            return Err(ApiError::bad_request(
                "A firewall group cannot move to another owner.",
            ));
        }
        (
            existing.gateway_id.clone(),
            existing.org_id.clone(),
            existing.key().to_string(),
        )
    };
    body.id = Some(id.clone());
    let (group, placement) = stored(&state, &principal, body, gateway_id, org_id);
    let checked = group.body.clone();
    let check = move |w: &World| validate(w, &checked, Some(&id)).map(drop);
    replace::<FirewallGroups>(&state, &principal, group, placement, check).await
}

/// The group as stored, owned by `gateway_id` of `org_id` (references
/// named), and where its task runs.
fn stored(
    state: &AppState,
    principal: &Principal,
    mut body: FirewallGroupBody,
    gateway_id: String,
    org_id: String,
) -> (FirewallGroup, Placement) {
    let world = state.world();
    body.owner_ref = Some(world.gateway_ref(&gateway_id));
    body.org_ref = Some(world.org_ref(&org_id));
    let group = FirewallGroup {
        body,
        gateway_id,
        org_id,
    };
    let placement = FirewallGroups::placement(&world, principal, &group);
    (group, placement)
}

//! How an ALB pool reads: the stored body with its computed status,
//! health and member counts, members with their health, and the
//! per-gateway summary. Health follows member health (hooks, and the
//! probes of tenant health monitors).

use serde_json::{Value, json};

use super::alb_pool_monitors;
use crate::ids::same_id;
use crate::world::alb::Pool;
use crate::world::member_health::{MemberCounts, MemberHealth, assigned_monitors};
use crate::world::{Ref, World};

pub(super) fn virtual_service_refs(world: &World, pool: &Pool) -> Vec<Ref> {
    let id = pool.id.as_deref().unwrap_or_default();
    world
        .virtual_services
        .iter()
        .filter(|vs| same_id(id, &vs.load_balancer_pool_ref.id))
        .map(|vs| Ref::new(&vs.name, vs.id.as_deref().unwrap_or_default()))
        .collect()
}

fn health(pool: &Pool, members: MemberCounts, used: bool) -> &'static str {
    let MemberCounts { enabled, up, .. } = members;
    match () {
        _ if !pool.enabled => "DISABLED",
        _ if enabled == 0 || !used => "UNAVAILABLE",
        _ if up == 0 => "DOWN",
        _ if up * 2 < enabled => "RUNNING",
        _ => "UP",
    }
}

/// The computed fields shared by the pool and its summary.
fn computed(world: &World, pool: &Pool) -> Value {
    let refs = virtual_service_refs(world, pool);
    let members = MemberCounts::of(world, pool);
    json!({
        "status": "REALIZED",
        "healthStatus": health(pool, members, !refs.is_empty()),
        "healthMessage": null,
        "memberCount": members.total,
        "enabledMemberCount": members.enabled,
        "upMemberCount": members.up,
        "virtualServiceRefs": refs,
    })
}

fn merge(target: &mut Value, extra: Value) {
    if let (Some(target), Value::Object(extra)) = (target.as_object_mut(), extra) {
        target.extend(extra);
    }
}

pub(super) fn pool_view(world: &World, pool: &Pool) -> Value {
    let mut view = json!(pool);
    merge(&mut view, computed(world, pool));
    let members: Vec<Value> = pool
        .members
        .iter()
        .map(|m| {
            let health = MemberHealth::of_listed(world, pool, m);
            let mut member = json!(m);
            merge(&mut member, json!({"healthStatus": health.status, "markedDownBy": health.marked_down_by, "detailedHealthMessage": null}));
            member
        })
        .collect();
    view["members"] = json!(members);
    view["healthMonitors"] = alb_pool_monitors::view(world, pool);
    view
}

pub(super) fn summary_view(world: &World, pool: &Pool) -> Value {
    let assigned = assigned_monitors(world, pool.id.as_deref().unwrap_or_default());
    let mut view = json!({
        "id": pool.id,
        "name": pool.name,
        "description": pool.description,
        "enabled": pool.enabled,
        "passiveMonitoringEnabled": pool.passive_monitoring_enabled,
        "activeMonitoringEnabled": !pool.health_monitors.is_empty() || !assigned.is_empty(),
        "memberSslEnabled": pool.ssl_enabled.unwrap_or(false),
        // Only IP sets can be member groups here.
        "memberGroupType": pool.member_group_ref.as_ref().map(|_| "IP_SET"),
    });
    merge(&mut view, computed(world, pool));
    if let Some(refs) = view["virtualServiceRefs"].as_array_mut() {
        refs.truncate(10);
    }
    view
}

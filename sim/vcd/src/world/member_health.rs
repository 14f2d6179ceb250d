//! A pool member's health as the world makes it: the tenant monitors
//! assigned to the pool probe it (through the probe table tests set), or a
//! test marks it; and the counts a pool reports from that.

use super::alb::{Pool, PoolMember};
use super::health_monitor::Monitor;
use super::ip::parse_ip;
use super::{World, find};
use crate::ids::same_id;

/// A member's health as its pool reports it, and the monitors that marked
/// it down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberHealth {
    pub status: String,
    pub marked_down_by: Vec<String>,
}

/// How many members a pool has, has enabled, and has up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemberCounts {
    pub total: usize,
    pub enabled: usize,
    pub up: usize,
}

impl MemberCounts {
    /// A pool's members; the entries of a member group (an IP set) count as
    /// enabled members. Each is up unless a monitor or a test marks it
    /// otherwise ([`MemberHealth::of`]).
    pub fn of(world: &World, pool: &Pool) -> MemberCounts {
        let group = pool
            .member_group_ref
            .as_ref()
            .and_then(|g| find(&world.firewall_groups, &g.id));
        if let Some(group) = group {
            let entries = group.body.ip_addresses.clone().unwrap_or_default();
            let up = entries
                .iter()
                .filter(|ip| MemberHealth::of(world, pool, ip, None).status == "UP")
                .count();
            return MemberCounts {
                total: entries.len(),
                enabled: entries.len(),
                up,
            };
        }
        let enabled: Vec<&PoolMember> = pool.members.iter().filter(|m| m.enabled).collect();
        let up = enabled
            .iter()
            .filter(|m| MemberHealth::of_listed(world, pool, m).status == "UP")
            .count();
        MemberCounts {
            total: pool.members.len(),
            enabled: enabled.len(),
            up,
        }
    }
}

/// An address as the probe table keys it (`2001:DB8::1` is `2001:db8::1`).
pub(super) fn probe_address(ip: &str) -> String {
    parse_ip(ip).map_or_else(|_| ip.to_string(), |address| address.to_string())
}

/// Whether a node answers health probes on `port`: as a test set it, else
/// it does.
fn probe_succeeds(world: &World, ip: &str, port: u16) -> bool {
    world
        .probes
        .get(&(probe_address(ip), port))
        .copied()
        .unwrap_or(true)
}

/// The TENANT monitors assigned to a pool, in assignment order.
pub fn assigned_monitors<'w>(world: &'w World, pool_id: &str) -> Vec<&'w Monitor> {
    world
        .monitor_assignments
        .iter()
        .filter(|a| same_id(&a.pool_id, pool_id))
        .filter_map(|a| find(&world.health_monitors, &a.monitor_id))
        .collect()
}

/// The gateway's pools that use `monitor`: for a TENANT one, those it is
/// assigned to; for a SYSTEM one, those naming its type.
pub fn monitor_pool_count(world: &World, monitor: &Monitor, gateway_id: &str) -> usize {
    let uses = |pool: &Pool| match monitor.is_system() {
        true => pool
            .health_monitors
            .iter()
            .any(|m| m.monitor_type == monitor.body.monitor_type),
        false => assigned_monitors(world, pool.id.as_deref().unwrap_or_default())
            .iter()
            .any(|m| m.id() == monitor.id()),
    };
    world
        .pools
        .iter()
        .filter(|p| same_id(gateway_id, &p.gateway_ref.id) && uses(p))
        .count()
}

/// Removes the pool's assignments of the monitors `keep` refuses.
pub fn retain_assignments(world: &mut World, pool_id: &str, keep: impl Fn(&str) -> bool) {
    world
        .monitor_assignments
        .retain(|a| !same_id(&a.pool_id, pool_id) || keep(&a.monitor_id));
}

impl MemberHealth {
    /// A member's health: DOWN when a tenant HTTP or HTTPS monitor of the
    /// pool probes it and the probe fails (on the monitor's port, else the
    /// member's, else the pool's default port, as the reference says),
    /// else what a hook set, `UP` by default.
    pub fn of(world: &World, pool: &Pool, ip: &str, member_port: Option<u32>) -> MemberHealth {
        let traffic_port = member_port.or(pool.default_port);
        let marked_down_by: Vec<String> =
            assigned_monitors(world, pool.id.as_deref().unwrap_or_default())
                .into_iter()
                .filter(|monitor| {
                    monitor
                        .body
                        .probe_port(traffic_port)
                        .is_some_and(|port| !probe_succeeds(world, ip, port))
                })
                .map(|monitor| monitor.name().to_string())
                .collect();
        let status = match marked_down_by.is_empty() {
            true => pool.member_health.get(ip).map_or("UP", String::as_str),
            false => "DOWN",
        };
        MemberHealth {
            status: status.to_string(),
            marked_down_by,
        }
    }

    /// A listed member's health: `DISABLED` when it is disabled.
    pub fn of_listed(world: &World, pool: &Pool, member: &PoolMember) -> MemberHealth {
        if !member.enabled {
            return MemberHealth {
                status: "DISABLED".to_string(),
                marked_down_by: Vec::new(),
            };
        }
        MemberHealth::of(world, pool, &member.ip_address, member.port)
    }
}

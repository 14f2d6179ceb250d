//! The writes of a Service's tenant monitors: each monitor its pools want
//! created (or its settings written back), assigned to the pools lacking
//! it — after a new pool's create, before an update that lists it — and a
//! pool that should drop one PUT without it. A monitor no pool uses once
//! the plan ran is deleted last.

use std::collections::BTreeSet;

use crate::lb::observe::monitors::MonitorView;
use crate::lb::observe::objects::ServiceObjects;
use crate::lb::plan::desired::DesiredPort;
use crate::lb::plan::op::Op;
use crate::vcd::resources::pool::Pool;

/// Adds the monitor writes of `desired` to `ops` (from `diff`).
pub fn add(
    view: &MonitorView,
    desired: &[DesiredPort],
    observed: &ServiceObjects,
    ops: &mut Vec<Op>,
) {
    let mut written = BTreeSet::new();
    let mut writes = Vec::new();
    for monitor in desired.iter().flat_map(|p| &p.monitors) {
        let known = view.by_name.get(&monitor.name);
        if known.is_none_or(|k| !monitor.same_settings(&k.monitor))
            && written.insert(monitor.name.clone())
        {
            let mut write = monitor.clone();
            write.id = known.map(|k| k.id.clone());
            writes.push(Op::WriteMonitor(write));
        }
    }
    for port in desired {
        assign(view, port, observed, ops);
    }
    ops.splice(0..0, writes);
}

fn assign(view: &MonitorView, port: &DesiredPort, observed: &ServiceObjects, ops: &mut Vec<Op>) {
    let pool = &port.pool.name;
    let want: BTreeSet<String> = port.monitors.iter().map(|m| m.name.clone()).collect();
    let pool_id = observed.pools.get(pool).map(|p| p.object.id.clone());
    let have = pool_id
        .as_deref()
        .map(|id| view.assigned_to(id))
        .unwrap_or_default();
    let assigns: Vec<Op> = want
        .difference(&have)
        .map(|monitor| Op::AssignMonitor {
            pool: pool.clone(),
            monitor: monitor.clone(),
        })
        .collect();
    let dropped = have.difference(&want).next().is_some();
    if let Some(at) = ops
        .iter()
        .position(|op| matches!(op, Op::CreatePool(p) if &p.name == pool))
    {
        // A pool body names no tenant monitor before it is assigned one.
        if let Op::CreatePool(created) = &mut ops[at] {
            created
                .health_monitors
                .retain(|m| !m.extra.contains_key("id"));
        }
        ops.splice(at + 1..at + 1, assigns);
    } else if let Some(at) = ops
        .iter()
        .position(|op| matches!(op, Op::UpdatePool { pool: p, .. } if &p.name == pool))
    {
        ops.splice(at..at, assigns);
    } else {
        ops.extend(assigns);
        if let (true, Some(id)) = (dropped, pool_id) {
            ops.push(Op::UpdatePool {
                id,
                pool: port.pool.clone(),
            });
        }
    }
}

/// The names of the tenant monitors a pool body lists.
pub fn listed_in(pool: &Pool) -> BTreeSet<String> {
    pool.health_monitors
        .iter()
        .filter(|m| m.extra.contains_key("id"))
        .filter_map(|m| m.extra.get("name")?.as_str().map(str::to_string))
        .collect()
}

/// The deletes of the cluster's monitors no pool uses once `ops` ran,
/// other than `wanted` (the applier keeps those another reconcile in
/// progress wants).
pub fn unused_after(view: &MonitorView, ops: &[Op], wanted: &BTreeSet<String>) -> Vec<Op> {
    let mut view = view.clone();
    for op in ops {
        match op {
            Op::DeletePool { id, .. } => {
                for m in view.by_name.values_mut() {
                    m.pools.remove(id);
                }
            }
            Op::UpdatePool { id, pool } => {
                let listed = listed_in(pool);
                for (name, m) in &mut view.by_name {
                    if !listed.contains(name) {
                        m.pools.remove(id);
                    }
                }
            }
            _ => {}
        }
    }
    view.by_name
        .into_iter()
        .filter(|(name, m)| m.pools.is_empty() && !wanted.contains(name))
        .map(|(name, m)| Op::DeleteMonitor { id: m.id, name })
        .collect()
}

//! The writes of tenant health monitors and their assignments, each made
//! under the lock of the cluster's known monitors: two reconciles wanting
//! one monitor create it once, a monitor a pool took meanwhile or a
//! reconcile in progress wants is not deleted (a failed write drops what
//! was known: see the applier).

use std::collections::BTreeSet;

use crate::lb::observe::monitors::{Known, Monitors};
use crate::lb::plan::monitor_ops::listed_in;
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::health_monitor::{Assignment, TenantMonitor};
use crate::vcd::resources::pool::Pool;
use crate::vcd::{VcdClient, VcdError};

/// Creates the monitor or writes its settings back; `false` when it is
/// already so.
pub(super) async fn write(
    client: &VcdClient,
    monitors: &Monitors,
    gateway_id: &str,
    monitor: TenantMonitor,
) -> Result<bool, VcdError> {
    let mut known = monitors.loaded(client, gateway_id).await?;
    let existing = known
        .get(&monitor.name)
        .map(|k| (k.id.clone(), k.monitor.clone()));
    let written = match existing {
        Some((_, read)) if monitor.same_settings(&read) => return Ok(false),
        Some((id, _)) => client
            .health_monitors()
            .update(gateway_id, &id, &monitor)
            .await
            .map(|()| id),
        None => client.health_monitors().create(gateway_id, &monitor).await,
    };
    let id = written?;
    known.wrote(
        &id,
        TenantMonitor {
            id: Some(id.clone()),
            ..monitor
        },
    );
    Ok(true)
}

/// Assigns the monitor `name` to the pool `pool_id`; `false` when it is.
pub(super) async fn assign(
    client: &VcdClient,
    monitors: &Monitors,
    gateway_id: &str,
    name: &str,
    pool: EntityRef,
) -> Result<bool, VcdError> {
    let mut known = monitors.loaded(client, gateway_id).await?;
    let Some(monitor) = known.get(name).cloned() else {
        return Err(VcdError::Missing {
            what: "health monitor",
            name: name.to_string(),
            scope: "among the cluster's monitors".to_string(),
        });
    };
    if monitor.pools.contains(&pool.id) {
        return Ok(false);
    }
    let assignment = Assignment {
        id: None,
        health_monitor_ref: EntityRef::new(name, monitor.id.clone()),
        load_balancer_pool_ref: pool.clone(),
    };
    client
        .health_monitors()
        .assign(gateway_id, &assignment)
        .await?;
    known.assigned(name, &pool.id);
    Ok(true)
}

/// Deletes the monitor unless a pool uses it or a reconcile in progress
/// wants it; `false` when it stays.
pub(super) async fn delete(
    client: &VcdClient,
    monitors: &Monitors,
    gateway_id: &str,
    id: &str,
    name: &str,
) -> Result<bool, VcdError> {
    let mut known = monitors.loaded(client, gateway_id).await?;
    let used = known.get(name).is_some_and(|m| !m.pools.is_empty());
    if used || monitors.is_pinned(name) {
        return Ok(false);
    }
    client.health_monitors().delete(gateway_id, id).await?;
    known.removed(name);
    Ok(true)
}

/// Fills in the ids of the tenant monitors the pool body lists.
pub(super) fn complete(known: &Known, pool: &mut Pool) {
    for item in &mut pool.health_monitors {
        let name = item.extra.get("name").and_then(|n| n.as_str());
        if let (Some(id), Some(known)) = (item.extra.get("id"), name.and_then(|n| known.get(n)))
            && id.as_str().is_some_and(str::is_empty)
        {
            item.extra.insert("id".into(), known.id.clone().into());
        }
    }
}

/// Records a written pool: it holds the monitors its body lists and no other.
pub(super) fn record_pool(known: &mut Known, pool_id: &str, pool: &Pool) {
    let listed: BTreeSet<String> = listed_in(pool);
    known.pool_lists(pool_id, &listed);
}

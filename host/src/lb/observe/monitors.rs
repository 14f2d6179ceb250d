//! The cluster's tenant health monitors (API 39.0+) and the pools each is
//! assigned to, as last read and written. One listing of the gateway's
//! monitors, then a read and an assignment listing per monitor of this
//! cluster (told by its tag), kept for [`GATEWAY_REFRESH`] or until a
//! drift check or a failed write drops it; writes of this process update
//! it as they land, so a reconcile whose monitors are right reads nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Instant;

use crate::lb::observe::snapshot::GATEWAY_REFRESH;
use crate::vcd::resources::health_monitor::TenantMonitor;
use crate::vcd::{VcdClient, VcdError};

/// One monitor of the cluster: as read (or written), and its pools' ids.
#[derive(Debug, Clone)]
pub struct KnownMonitor {
    pub id: String,
    pub monitor: TenantMonitor,
    pub pools: BTreeSet<String>,
}

/// The cluster's monitors by name.
#[derive(Debug, Clone, Default)]
pub struct MonitorView {
    pub by_name: BTreeMap<String, KnownMonitor>,
}

impl MonitorView {
    /// The names of the monitors assigned to the pool `pool_id`.
    pub fn assigned_to(&self, pool_id: &str) -> BTreeSet<String> {
        self.by_name
            .iter()
            .filter(|(_, m)| m.pools.contains(pool_id))
            .map(|(name, _)| name.clone())
            .collect()
    }
}

#[derive(Debug, Default)]
pub struct Known {
    read_at: Option<Instant>,
    view: MonitorView,
}

impl Known {
    pub fn get(&self, name: &str) -> Option<&KnownMonitor> {
        self.view.by_name.get(name)
    }

    /// Records a monitor as created or rewritten.
    pub fn wrote(&mut self, id: &str, monitor: TenantMonitor) {
        let pools = self
            .view
            .by_name
            .remove(&monitor.name)
            .map(|m| m.pools)
            .unwrap_or_default();
        let entry = KnownMonitor {
            id: id.to_string(),
            monitor,
            pools,
        };
        self.view.by_name.insert(entry.monitor.name.clone(), entry);
    }

    /// Records the monitor `name` as assigned to `pool_id`.
    pub fn assigned(&mut self, name: &str, pool_id: &str) {
        if let Some(m) = self.view.by_name.get_mut(name) {
            m.pools.insert(pool_id.to_string());
        }
    }

    /// Records a PUT of the pool listing exactly `names`: it drops the rest.
    pub fn pool_lists(&mut self, pool_id: &str, names: &BTreeSet<String>) {
        for (name, m) in &mut self.view.by_name {
            if !names.contains(name) {
                m.pools.remove(pool_id);
            }
        }
    }

    /// Records a pool as deleted, with its assignments.
    pub fn pool_deleted(&mut self, pool_id: &str) {
        self.pool_lists(pool_id, &BTreeSet::new());
    }

    pub fn removed(&mut self, name: &str) {
        self.view.by_name.remove(name);
    }

    /// Forgets everything: a failed write means VCD knows something this
    /// process does not.
    pub fn forget(&mut self) {
        *self = Known::default();
    }
}

/// The tenant monitors of one cluster on one gateway.
#[derive(Debug)]
pub struct Monitors {
    /// The tag every monitor of this cluster carries before its digest.
    tag: String,
    known: tokio::sync::Mutex<Known>,
    /// Monitors reconciles in progress want: never deleted meanwhile.
    pins: Mutex<HashMap<String, usize>>,
}

impl Monitors {
    pub fn new(tag: String) -> Self {
        Self {
            tag,
            known: tokio::sync::Mutex::default(),
            pins: Mutex::default(),
        }
    }

    /// Whether `description` is the tag of one of this cluster's monitors.
    pub fn is_ours(&self, description: Option<&str>) -> bool {
        description
            .and_then(|d| d.split(" spec=").next())
            .is_some_and(|tag| tag == self.tag)
    }

    /// Forgets what was read: the next use reads the monitors again.
    pub async fn invalidate(&self) {
        self.known.lock().await.forget();
    }

    /// The monitors as known, read again when stale (or `fresh`).
    pub async fn view(
        &self,
        client: &VcdClient,
        gateway_id: &str,
        fresh: bool,
    ) -> Result<MonitorView, VcdError> {
        let mut known = self.known.lock().await;
        let stale = known
            .read_at
            .is_none_or(|at| fresh || at.elapsed() > GATEWAY_REFRESH);
        if stale {
            known.view = self.read(client, gateway_id).await?;
            known.read_at = Some(Instant::now());
        }
        Ok(known.view.clone())
    }

    async fn read(&self, client: &VcdClient, gateway_id: &str) -> Result<MonitorView, VcdError> {
        let mut view = MonitorView::default();
        let summaries = client.health_monitors().summaries(gateway_id, None).await?;
        for summary in summaries
            .into_iter()
            .filter(|s| s.scope.as_deref() == Some("TENANT"))
            .filter(|s| self.is_ours(s.description.as_deref()))
        {
            let monitor = client.health_monitors().get(&summary.id).await?;
            let pools = match summary.pool_count {
                Some(0) => BTreeSet::new(),
                _ => client
                    .health_monitors()
                    .assignments(&summary.id)
                    .await?
                    .into_iter()
                    .map(|a| a.load_balancer_pool_ref.id)
                    .collect(),
            };
            view.by_name.insert(
                summary.name.clone(),
                KnownMonitor {
                    id: summary.id,
                    monitor,
                    pools,
                },
            );
        }
        Ok(view)
    }

    /// The known monitors, locked to record a write.
    pub async fn writing(&self) -> tokio::sync::MutexGuard<'_, Known> {
        self.known.lock().await
    }

    /// The known monitors, locked for a write that acts on what is known:
    /// read again first if a drift check or a failed write dropped them,
    /// so that "no longer known" is never taken for "not there" (which
    /// would create a monitor twice or fail an assignment).
    pub async fn loaded(
        &self,
        client: &VcdClient,
        gateway_id: &str,
    ) -> Result<tokio::sync::MutexGuard<'_, Known>, VcdError> {
        let mut known = self.known.lock().await;
        if known.read_at.is_none() {
            known.view = self.read(client, gateway_id).await?;
            known.read_at = Some(Instant::now());
        }
        Ok(known)
    }

    fn lock_pins(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.pins
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Holds `names` against deletion until the guard is dropped.
    pub fn pin(self: &std::sync::Arc<Self>, names: BTreeSet<String>) -> MonitorPins {
        let mut pins = self.lock_pins();
        for name in &names {
            *pins.entry(name.clone()).or_default() += 1;
        }
        MonitorPins {
            monitors: self.clone(),
            names,
        }
    }

    pub fn is_pinned(&self, name: &str) -> bool {
        self.lock_pins().contains_key(name)
    }
}

/// Monitors a reconcile in progress wants; unpinned when dropped.
#[derive(Debug)]
pub struct MonitorPins {
    monitors: std::sync::Arc<Monitors>,
    names: BTreeSet<String>,
}

impl Drop for MonitorPins {
    fn drop(&mut self) {
        let mut pins = self.monitors.lock_pins();
        for name in &self.names {
            if let Some(count) = pins.get_mut(name) {
                *count -= 1;
                if *count == 0 {
                    pins.remove(name);
                }
            }
        }
    }
}

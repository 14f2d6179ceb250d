//! The VM inventory cache. One load reads every VM of the cluster: one paged
//! VM query finds the cluster's vApps, then one GET per vApp returns the full
//! document of each VM in it (NICs, sizing, computer name, power state). So
//! initialising N nodes costs a few calls, not a few per node.
//!
//! Lookups are served from the last load while it is younger than the cache
//! period. A miss (or an expired load) triggers a reload shared by every
//! caller waiting at that moment (single flight): callers remember how many
//! loads had been attempted when they missed and, once they hold the load
//! lock, reuse the outcome of any load attempted since, error included.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use super::config::ClusterVApps;
use super::errors::InstancesError;
use crate::vcd::VcdClient;
use crate::vcd::resources::vm::{Vm, VmRecord, VmScope};

/// A VM of the cluster as last observed.
#[derive(Debug, Clone)]
pub struct CachedVm {
    pub vm: Vm,
    /// The lower-case VM URN.
    pub urn: String,
    pub vdc: VmVdc,
    /// When the data was read (a load counts from its start).
    pub observed_at: Instant,
}

/// The VDC a VM runs in, as the VM query names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VmVdc {
    pub name: Option<String>,
    /// `urn:vcloud:vdc:<uuid>`, from the VDC's href.
    pub urn: Option<String>,
}

impl VmVdc {
    fn of(record: &VmRecord) -> Self {
        Self {
            name: record.vdc_name.clone(),
            urn: vdc_uuid(record).map(|uuid| format!("urn:vcloud:vdc:{uuid}")),
        }
    }
}

/// The UUID at the end of a VM record's VDC href.
fn vdc_uuid(record: &VmRecord) -> Option<&str> {
    record
        .vdc
        .as_deref()
        .and_then(|href| href.trim_end_matches('/').rsplit('/').next())
}

/// How the node names its VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VmKey {
    /// A lower-case VM URN (from the providerID).
    Urn(String),
    /// The node name, compared exactly with VM names.
    Name(String),
}

#[derive(Default)]
struct Snapshot {
    loaded_at: Option<Instant>,
    by_urn: HashMap<String, Arc<CachedVm>>,
}

impl Snapshot {
    fn find(
        &self,
        key: &VmKey,
        vapps: &ClusterVApps,
    ) -> Result<Option<Arc<CachedVm>>, InstancesError> {
        match key {
            VmKey::Urn(urn) => Ok(self.by_urn.get(urn).cloned()),
            VmKey::Name(name) => {
                let mut named = self.by_urn.values().filter(|c| &c.vm.name == name);
                let first = named.next().cloned();
                let others = named.count();
                if others > 0 {
                    return Err(InstancesError::Ambiguous {
                        name: name.clone(),
                        count: others + 1,
                        scope: vapps.describe(),
                    });
                }
                Ok(first)
            }
        }
    }
}

/// The outcome of the last load attempt, for callers that waited for it.
#[derive(Default)]
struct LoadOutcome {
    error: Option<InstancesError>,
}

pub struct Inventory {
    client: VcdClient,
    vapps: ClusterVApps,
    period: Duration,
    snapshot: RwLock<Snapshot>,
    /// Load attempts so far, successful or not.
    attempts: AtomicU64,
    load_lock: tokio::sync::Mutex<LoadOutcome>,
}

impl Inventory {
    pub fn new(client: VcdClient, vapps: ClusterVApps, period: Duration) -> Self {
        Self {
            client,
            vapps,
            period,
            snapshot: RwLock::new(Snapshot::default()),
            attempts: AtomicU64::new(0),
            load_lock: tokio::sync::Mutex::new(LoadOutcome::default()),
        }
    }

    pub fn vapps(&self) -> &ClusterVApps {
        &self.vapps
    }

    /// The VM `key` names, from the cache or, on a miss, from a (shared) load.
    pub async fn lookup(&self, key: &VmKey) -> Result<Option<Arc<CachedVm>>, InstancesError> {
        // Read the attempt count before looking, so a load that finishes
        // after the look is one this caller may share.
        let seen = self.attempts.load(Ordering::Acquire);
        {
            let snapshot = self.read();
            let fresh = snapshot
                .loaded_at
                .is_some_and(|at| at.elapsed() < self.period);
            if fresh && let Some(hit) = snapshot.find(key, &self.vapps)? {
                return Ok(Some(hit));
            }
        }
        self.load_after(seen).await?;
        self.read().find(key, &self.vapps)
    }

    /// How many VMs the inventory holds, from a load younger than the cache
    /// period (loading if there is none).
    pub async fn vm_count(&self) -> Result<usize, InstancesError> {
        let seen = self.attempts.load(Ordering::Acquire);
        {
            let snapshot = self.read();
            if snapshot
                .loaded_at
                .is_some_and(|at| at.elapsed() < self.period)
            {
                return Ok(snapshot.by_urn.len());
            }
        }
        self.load_after(seen).await?;
        Ok(self.read().by_urn.len())
    }

    /// The VM `key` names with data at most `max_age` old: an older entry
    /// is read again by id; a VM VCD no longer has is dropped and looked up
    /// once more (a node name may now belong to a new VM).
    pub async fn lookup_fresh(
        &self,
        key: &VmKey,
        max_age: Duration,
    ) -> Result<Option<Arc<CachedVm>>, InstancesError> {
        let Some(cached) = self.lookup(key).await? else {
            return Ok(None);
        };
        if cached.observed_at.elapsed() <= max_age {
            return Ok(Some(cached));
        }
        let observed_at = Instant::now();
        match self.client.vms().get(&cached.urn).await {
            Ok(vm) => {
                let fresh = Arc::new(CachedVm {
                    vm,
                    urn: cached.urn.clone(),
                    vdc: cached.vdc.clone(),
                    observed_at,
                });
                self.write().by_urn.insert(fresh.urn.clone(), fresh.clone());
                Ok(Some(fresh))
            }
            Err(error) if error.is_not_found() => {
                tracing::debug!(vm = %cached.urn, %error, "a cached VM is gone; looking again");
                self.write().by_urn.remove(&cached.urn);
                self.lookup(key).await
            }
            Err(error) => Err(InstancesError::PowerState {
                vm: cached.urn.clone(),
                source: Arc::new(error),
            }),
        }
    }

    /// Loads unless a load was attempted since the caller saw `seen`
    /// attempts; then that load's outcome is the caller's.
    async fn load_after(&self, seen: u64) -> Result<(), InstancesError> {
        let mut outcome = self.load_lock.lock().await;
        if self.attempts.load(Ordering::Acquire) != seen {
            return outcome.error.clone().map_or(Ok(()), Err);
        }
        let result = self.load().await;
        outcome.error = result.as_ref().err().cloned();
        self.attempts.fetch_add(1, Ordering::Release);
        result
    }

    async fn load(&self) -> Result<(), InstancesError> {
        let started = Instant::now();
        let scope = match &self.vapps {
            ClusterVApps::Named(name) => VmScope::VApp(name.clone()),
            ClusterVApps::ZonePrefix(prefix) => VmScope::VAppPrefix(format!("{prefix}_")),
        };
        let failed = |error| InstancesError::Inventory {
            scope: self.vapps.describe(),
            source: Arc::new(error),
        };
        let records = self.client.vms().query(&scope).await.map_err(failed)?;
        let mut by_urn = HashMap::new();
        for (vapp_href, vdc) in cluster_vapps(&records, &self.vapps) {
            let vapp = self
                .client
                .vms()
                .vapp_with_vms(&vapp_href)
                .await
                .map_err(failed)?;
            for vm in vapp.vms {
                let urn = vm.id.to_ascii_lowercase();
                let cached = CachedVm {
                    vm,
                    urn: urn.clone(),
                    vdc: vdc.clone(),
                    observed_at: started,
                };
                by_urn.insert(urn, Arc::new(cached));
            }
        }
        tracing::debug!(
            vms = by_urn.len(),
            took_ms = started.elapsed().as_millis() as u64,
            scope = %self.vapps.describe(),
            "loaded the VM inventory"
        );
        *self.write() = Snapshot {
            loaded_at: Some(started),
            by_urn,
        };
        Ok(())
    }

    fn read(&self) -> RwLockReadGuard<'_, Snapshot> {
        // A panic while holding the lock leaves a whole snapshot behind.
        self.snapshot.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Snapshot> {
        self.snapshot.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// The hrefs of the cluster's vApps among the query's records, with each
/// one's VDC. The query's filters are case-insensitive wildcards, so
/// membership is checked exactly here, as upstream does.
fn cluster_vapps(records: &[VmRecord], vapps: &ClusterVApps) -> BTreeMap<String, VmVdc> {
    let mut found = BTreeMap::new();
    for record in records {
        let (Some(vapp_name), Some(vapp_href)) = (&record.container_name, &record.container) else {
            continue;
        };
        let member = match vapps {
            ClusterVApps::Named(name) => vapp_name == name,
            ClusterVApps::ZonePrefix(prefix) => vdc_uuid(record)
                .is_some_and(|vdc_uuid| vapp_name.starts_with(&format!("{prefix}_{vdc_uuid}"))),
        };
        if member {
            found
                .entry(vapp_href.clone())
                .or_insert_with(|| VmVdc::of(record));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(vapp: &str, vdc_uuid: &str) -> VmRecord {
        VmRecord {
            name: "vm".into(),
            href: "https://h/api/vApp/vm-1".into(),
            container_name: Some(vapp.into()),
            container: Some(format!("https://h/api/vApp/vapp-{vapp}")),
            vdc: Some(format!("https://h/api/vdc/{vdc_uuid}")),
            vdc_name: Some(format!("vdc-{vdc_uuid}")),
            status: None,
            ip_address: None,
        }
    }

    #[test]
    fn membership_is_exact_although_the_query_is_a_case_insensitive_glob() {
        let records = [
            record("cluster1", "u1"),
            record("CLUSTER1", "u1"),
            record("cluster1_u1_md0", "u1"),
            record("cluster1_u2_md0", "u1"),
            record("Cluster1_u1_md1", "u1"),
        ];
        let named = cluster_vapps(&records, &ClusterVApps::Named("cluster1".into()));
        assert_eq!(
            named.keys().collect::<Vec<_>>(),
            ["https://h/api/vApp/vapp-cluster1"]
        );
        let zoned = cluster_vapps(&records, &ClusterVApps::ZonePrefix("cluster1".into()));
        assert_eq!(
            zoned.into_iter().collect::<Vec<_>>(),
            [(
                "https://h/api/vApp/vapp-cluster1_u1_md0".to_string(),
                VmVdc {
                    name: Some("vdc-u1".to_string()),
                    urn: Some("urn:vcloud:vdc:u1".to_string()),
                }
            )]
        );
    }
}

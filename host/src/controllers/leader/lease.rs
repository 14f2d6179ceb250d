//! One attempt to acquire or renew the Lease, as client-go's
//! `tryAcquireOrRenew` makes it, and what this process has observed of the
//! Lease so far.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::Api;
use kube::api::PostParams;
use kube::runtime::{WatchStreamExt, watcher};

use super::{HEALTH_TOLERANCE, LeaderConfig};

/// The leader-election fields of a Lease's spec.
#[derive(Debug, Clone, PartialEq)]
struct LeaseRecord {
    holder: String,
    lease_duration_seconds: i32,
    acquire_time: Option<MicroTime>,
    renew_time: Option<MicroTime>,
    transitions: i32,
}

impl LeaseRecord {
    fn of(lease: &Lease) -> LeaseRecord {
        let spec = lease.spec.clone().unwrap_or_default();
        LeaseRecord {
            holder: spec.holder_identity.unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time,
            renew_time: spec.renew_time,
            transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    /// Writes the record into `lease`, keeping the spec's other fields.
    fn write_into(&self, lease: &mut Lease) {
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.holder_identity = Some(self.holder.clone());
        spec.lease_duration_seconds = Some(self.lease_duration_seconds);
        spec.acquire_time = self.acquire_time.clone();
        spec.renew_time = self.renew_time.clone();
        spec.lease_transitions = Some(self.transitions);
    }
}

/// The last record seen and when it was first seen by the local clock:
/// validity is judged from `at`, never from the times written in the Lease,
/// so clock skew between candidates does not matter.
struct Observed {
    record: Option<LeaseRecord>,
    at: Instant,
    /// The Lease as last read or written, whose resourceVersion the next
    /// update is conditional on.
    lease: Option<Lease>,
}

/// How an attempt ended.
pub(super) enum Attempt {
    /// This process holds the Lease, just written.
    Held,
    /// Another candidate holds a Lease that has not expired.
    HeldBy(String),
    Failed(kube::Error),
}

pub(super) struct LeaseLock {
    api: Api<Lease>,
    pub(super) config: LeaderConfig,
    observed: Mutex<Observed>,
}

impl LeaseLock {
    pub(super) fn new(api: Api<Lease>, config: LeaderConfig) -> LeaseLock {
        LeaseLock {
            api,
            config,
            observed: Mutex::new(Observed {
                record: None,
                at: Instant::now(),
                lease: None,
            }),
        }
    }

    fn observed(&self) -> MutexGuard<'_, Observed> {
        self.observed.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn is_leader(&self, observed: &Observed) -> bool {
        observed
            .record
            .as_ref()
            .is_some_and(|record| record.holder == self.config.identity)
    }

    fn lease_valid(observed: &Observed, now: Instant) -> bool {
        observed.record.as_ref().is_some_and(|record| {
            let duration = u64::try_from(record.lease_duration_seconds).unwrap_or(0);
            observed.at + Duration::from_secs(duration) > now
        })
    }

    /// client-go's healthz check: a leader that has not renewed for the lease
    /// duration plus [`HEALTH_TOLERANCE`] is stuck; candidates are healthy.
    pub(super) fn check_health(&self) -> Result<(), String> {
        let observed = self.observed();
        if self.is_leader(&observed)
            && observed.at.elapsed() > self.config.lease_duration + HEALTH_TOLERANCE
        {
            return Err(format!(
                "failed election to renew leadership on lease {}",
                self.config.lease_key()
            ));
        }
        Ok(())
    }

    /// The Lease as an Event's involved object.
    pub(super) fn reference(&self) -> ObjectReference {
        let observed = self.observed();
        let metadata = observed.lease.as_ref().map(|lease| &lease.metadata);
        ObjectReference {
            api_version: Some("coordination.k8s.io/v1".into()),
            kind: Some("Lease".into()),
            namespace: Some(self.config.namespace.clone()),
            name: Some(self.config.name.clone()),
            uid: metadata.and_then(|m| m.uid.clone()),
            resource_version: metadata.and_then(|m| m.resource_version.clone()),
            ..ObjectReference::default()
        }
    }

    /// Renews the Lease if this process holds it, takes it if it is free or
    /// expired, and otherwise reports who holds it.
    pub(super) async fn try_acquire_or_renew(&self) -> Attempt {
        let now = MicroTime(jiff::Timestamp::now());
        let mut desired = LeaseRecord {
            holder: self.config.identity.clone(),
            lease_duration_seconds: self.config.lease_duration_seconds(),
            acquire_time: Some(now.clone()),
            renew_time: Some(now),
            transitions: 0,
        };

        // Fast path: a leader renews on the Lease it last wrote, without a read.
        let renewable = {
            let observed = self.observed();
            let valid = Self::lease_valid(&observed, Instant::now());
            match (&observed.record, &observed.lease) {
                (Some(record), Some(lease)) if valid && self.is_leader(&observed) => {
                    Some((record.clone(), lease.clone()))
                }
                _ => None,
            }
        };
        if let Some((record, lease)) = renewable {
            desired.acquire_time = record.acquire_time;
            desired.transitions = record.transitions;
            match self.write(lease, &desired).await {
                Ok(()) => return Attempt::Held,
                Err(error) => {
                    tracing::debug!(%error, "optimistic lease renewal failed, reading the lease")
                }
            }
        }

        let current = match self.api.get_opt(&self.config.name).await {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                return match self.create(&desired).await {
                    Ok(()) => Attempt::Held,
                    Err(error) => Attempt::Failed(error),
                };
            }
            Err(error) => return Attempt::Failed(error),
        };
        let record = LeaseRecord::of(&current);
        {
            let mut observed = self.observed();
            if observed.record.as_ref() != Some(&record) {
                observed.record = Some(record.clone());
                observed.at = Instant::now();
            }
            observed.lease = Some(current.clone());
            if !record.holder.is_empty()
                && Self::lease_valid(&observed, Instant::now())
                && !self.is_leader(&observed)
            {
                return Attempt::HeldBy(record.holder);
            }
        }
        if record.holder == self.config.identity {
            desired.acquire_time = record.acquire_time;
            desired.transitions = record.transitions;
        } else {
            desired.transitions = record.transitions.saturating_add(1);
        }
        match self.write(current, &desired).await {
            Ok(()) => Attempt::Held,
            Err(error) => Attempt::Failed(error),
        }
    }

    /// Gives the Lease up if this process holds it: no holder and a
    /// one-second duration, so a standby takes it at its next attempt
    /// instead of after the lease duration (upstream's release on cancel).
    pub(super) async fn release(&self) -> Result<(), kube::Error> {
        let lease = self.api.get(&self.config.name).await?;
        let record = LeaseRecord::of(&lease);
        if record.holder != self.config.identity {
            return Ok(());
        }
        let released = LeaseRecord {
            holder: String::new(),
            lease_duration_seconds: 1,
            ..record
        };
        self.write(lease, &released).await
    }

    /// Yields each time the Lease is seen with no holder, as a leader that
    /// stopped leaves it: a candidate need not wait for its next retry.
    pub(super) fn released(&self) -> impl Stream<Item = ()> + Send + 'static {
        let only_this =
            watcher::Config::default().fields(&format!("metadata.name={}", self.config.name));
        watcher(self.api.clone(), only_this)
            .default_backoff()
            .applied_objects()
            .filter_map(|lease| async move {
                let lease = lease.ok()?;
                LeaseRecord::of(&lease).holder.is_empty().then_some(())
            })
    }

    /// Replaces the Lease, conditional on the resourceVersion `lease` carries.
    async fn write(&self, mut lease: Lease, record: &LeaseRecord) -> Result<(), kube::Error> {
        record.write_into(&mut lease);
        let written = self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await?;
        self.observe_written(written);
        Ok(())
    }

    async fn create(&self, record: &LeaseRecord) -> Result<(), kube::Error> {
        let mut lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.config.name.clone()),
                namespace: Some(self.config.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: None,
        };
        record.write_into(&mut lease);
        let created = self.api.create(&PostParams::default(), &lease).await?;
        self.observe_written(created);
        Ok(())
    }

    /// Records the server's copy, so the next read compares equal to it.
    fn observe_written(&self, lease: Lease) {
        let mut observed = self.observed();
        observed.record = Some(LeaseRecord::of(&lease));
        observed.at = Instant::now();
        observed.lease = Some(lease);
    }
}

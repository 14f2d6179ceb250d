//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's
//! algorithm and the cloud-controller-manager's defaults: Lease
//! `kube-system/cloud-controller-manager`, 15 s lease duration, 10 s renew
//! deadline, 2 s retry period, identity `<hostname>_<uuid>`.
//!
//! [`LeaderElector::acquire`] tries every retry period (with client-go's
//! jitter) until it holds the Lease; a Lease held by another candidate is
//! taken only once it has not changed for its lease duration by the local
//! clock. The returned [`Leadership`] renews every retry period in the
//! background; [`Leadership::lost`] resolves when a renewal has not succeeded
//! within the renew deadline or another holder is seen, and the caller is
//! expected to exit (status 1, as upstream). A leader that stops on purpose
//! ([`Leadership::release`], [`Leadership::step_down`]) releases the Lease,
//! and a candidate watches the Lease so it takes a released one at once
//! rather than at its next retry.
//!
//! A Normal `LeaderElection` Event "`<identity>` became leader" is recorded on
//! the Lease, and the gauge `leader_election_master_status{name}` is 1 while
//! this process leads. [`LeaderHealth`] is the `/healthz` check.

#[cfg(feature = "fault-injection")]
mod failpoint;
mod lease;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::{Api, Client};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, timeout, timeout_at};

use self::lease::{Attempt, LeaseLock};
use crate::controllers::events::{EventRecorder, EventType};

/// Upstream's `--leader-elect-resource-namespace` default.
pub const DEFAULT_LEASE_NAMESPACE: &str = "kube-system";
/// Upstream's `--leader-elect-resource-name` default.
pub const DEFAULT_LEASE_NAME: &str = "cloud-controller-manager";

/// How long past the lease duration a leader that stopped renewing still
/// reports healthy (controller-manager's `maxTolerableExpiredLease`).
pub const HEALTH_TOLERANCE: Duration = Duration::from_secs(20);

/// client-go's `JitterFactor`: the renew deadline must exceed 1.2 × the
/// retry period.
const JITTER_FACTOR: f64 = 1.2;

/// A candidate waits retry × [1, 1.1) between attempts. client-go waits
/// up to 2.2 × retry, which lets a handover take up to ~24 s with the
/// defaults; a tenth is enough to keep two candidates apart and keeps the
/// handover under 20 s (lease + two attempts).
const ACQUIRE_JITTER: f64 = 0.1;

/// Where the Lease is and how the election is timed.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderConfig {
    /// Namespace of the Lease.
    pub namespace: String,
    /// Name of the Lease.
    pub name: String,
    /// Unique per process; [`default_identity`] gives `<hostname>_<uuid>`.
    pub identity: String,
    /// How long a candidate waits after the Lease last changed before taking it.
    /// Written to the Lease in whole seconds.
    pub lease_duration: Duration,
    /// How long the leader keeps retrying a renewal before giving up.
    pub renew_deadline: Duration,
    /// The interval between attempts to acquire or renew.
    pub retry_period: Duration,
}

impl Default for LeaderConfig {
    fn default() -> Self {
        Self {
            namespace: DEFAULT_LEASE_NAMESPACE.into(),
            name: DEFAULT_LEASE_NAME.into(),
            identity: default_identity(),
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
        }
    }
}

impl LeaderConfig {
    fn lease_key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn lease_duration_seconds(&self) -> i32 {
        i32::try_from(self.lease_duration.as_secs()).unwrap_or(i32::MAX)
    }

    /// client-go's checks, so a misconfiguration fails at start.
    pub fn validate(&self) -> Result<(), LeaderConfigError> {
        if self.namespace.is_empty() || self.name.is_empty() {
            return Err(LeaderConfigError::NoLease);
        }
        if self.identity.is_empty() {
            return Err(LeaderConfigError::EmptyIdentity);
        }
        if self.lease_duration < Duration::from_secs(1) {
            return Err(LeaderConfigError::LeaseUnderOneSecond(self.lease_duration));
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(LeaderConfigError::RenewDeadlineNotShorter {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
            });
        }
        if self.retry_period.is_zero()
            || self.renew_deadline <= self.retry_period.mul_f64(JITTER_FACTOR)
        {
            return Err(LeaderConfigError::RetryPeriodTooLong {
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
            });
        }
        Ok(())
    }
}

/// Why a [`LeaderConfig`] cannot be used; client-go refuses the same.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LeaderConfigError {
    /// The Lease namespace or name is empty.
    #[error("leader election needs a lease namespace and name")]
    NoLease,
    /// The identity is empty.
    #[error("leader election identity is empty")]
    EmptyIdentity,
    /// The lease duration is under a second.
    #[error("leader election lease duration must be at least 1s, got {0:?}")]
    LeaseUnderOneSecond(Duration),
    #[error(
        "leader election lease duration ({lease_duration:?}) must be longer than the renew deadline ({renew_deadline:?})"
    )]
    /// A leader could lose the Lease before it gives up renewing.
    RenewDeadlineNotShorter {
        /// `--leader-elect-lease-duration`.
        lease_duration: Duration,
        /// `--leader-elect-renew-deadline`.
        renew_deadline: Duration,
    },
    #[error(
        "leader election renew deadline ({renew_deadline:?}) must be longer than 1.2 × the retry period ({retry_period:?}), which must not be zero"
    )]
    /// Too few renewal attempts fit in the renew deadline.
    RetryPeriodTooLong {
        /// `--leader-elect-renew-deadline`.
        renew_deadline: Duration,
        /// `--leader-elect-retry-period`.
        retry_period: Duration,
    },
}

/// `<hostname>_<uuid v4>`, as upstream. The uuid alone keeps identities
/// unique, so an unreadable hostname becomes `unknown` rather than an error.
pub fn default_identity() -> String {
    let host = hostname::get()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown".into());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// Why leadership ended.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LeadershipLost {
    #[error(
        "lease {lease} was not renewed within the {deadline:?} renew deadline (last error: {last_error})"
    )]
    /// Renewals kept failing until the renew deadline passed.
    NotRenewed {
        /// `namespace/name` of the Lease.
        lease: String,
        /// The renew deadline.
        deadline: Duration,
        /// The last renewal's error.
        last_error: String,
    },
    /// Another candidate holds the Lease.
    #[error("lease {lease} is now held by {holder}")]
    TakenOver {
        /// `namespace/name` of the Lease.
        lease: String,
        /// The new holder's identity.
        holder: String,
    },
    /// This process gave the Lease up, so a healthier standby can lead.
    #[error("gave up lease {lease}: {reason}")]
    SteppedDown {
        /// `namespace/name` of the Lease.
        lease: String,
        /// Why.
        reason: String,
    },
    /// The renewing task ended without saying why.
    #[error("renewing lease {lease} stopped unexpectedly")]
    RenewerStopped {
        /// `namespace/name` of the Lease.
        lease: String,
    },
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ElectionLabels {
    name: String,
}

/// Runs the election for one process; call [`LeaderElector::acquire`] once.
pub struct LeaderElector {
    lock: Arc<LeaseLock>,
    recorder: EventRecorder,
    master_status: Gauge,
}

impl LeaderElector {
    /// `recorder` should have the component `cloud-controller-manager`, as
    /// upstream's leader Events do. Registers `leader_election_master_status`.
    pub fn new(
        client: Client,
        config: LeaderConfig,
        recorder: EventRecorder,
        registry: &mut Registry,
    ) -> Result<Self, LeaderConfigError> {
        config.validate()?;
        let status = Family::<ElectionLabels, Gauge>::default();
        registry.register(
            "leader_election_master_status",
            "1 while this process leads through the named lease, 0 otherwise",
            status.clone(),
        );
        let master_status = status
            .get_or_create(&ElectionLabels {
                name: config.name.clone(),
            })
            .clone();
        master_status.set(0);
        let api = Api::namespaced(client, &config.namespace);
        Ok(Self {
            lock: Arc::new(LeaseLock::new(api, config)),
            recorder,
            master_status,
        })
    }

    /// The `/healthz` check, usable before and after leadership is acquired.
    pub fn health(&self) -> LeaderHealth {
        LeaderHealth {
            lock: self.lock.clone(),
        }
    }

    /// Waits until this process holds the Lease, then keeps renewing it
    /// until the returned [`Leadership`] is lost or dropped.
    pub async fn acquire(&self) -> Leadership {
        let config = &self.lock.config;
        tracing::info!(lease = %config.lease_key(), identity = %config.identity, "attempting to acquire the leader lease");
        let mut released = std::pin::pin!(self.lock.released());
        loop {
            match timeout(config.renew_deadline, self.lock.try_acquire_or_renew()).await {
                Ok(Attempt::Held) => break,
                Ok(Attempt::HeldBy(holder)) => {
                    tracing::debug!(%holder, "the leader lease is held by another candidate");
                }
                Ok(Attempt::Failed(error)) => {
                    tracing::warn!(%error, lease = %config.lease_key(), "cannot read or write the leader lease");
                }
                Err(_) => {
                    tracing::warn!(lease = %config.lease_key(), "the leader lease request timed out");
                }
            }
            let jitter = 1.0 + fastrand::f64() * ACQUIRE_JITTER;
            tokio::select! {
                () = sleep(config.retry_period.mul_f64(jitter)) => {}
                Some(()) = released.next() => {
                    tracing::debug!(lease = %config.lease_key(), "the leader lease was released; trying at once");
                }
            }
        }
        tracing::info!(lease = %config.lease_key(), identity = %config.identity, "acquired the leader lease");
        self.master_status.set(1);
        let (report, lost) = watch::channel(None);
        let renewer = tokio::spawn(keep_renewing(
            self.lock.clone(),
            self.master_status.clone(),
            report,
        ));
        // Renewing already runs, so a slow Event write cannot cost the Lease;
        // and should this future be dropped meanwhile, so is the renewer.
        let leadership = Leadership {
            lost,
            renewer,
            health: self.health(),
            master_status: self.master_status.clone(),
            lease: config.lease_key(),
        };
        let lease = self.lock.reference();
        let message = format!("{} became leader", config.identity);
        let event = self
            .recorder
            .publish(&lease, EventType::Normal, "LeaderElection", &message);
        if timeout(config.renew_deadline, event).await.is_err() {
            tracing::warn!(lease = %config.lease_key(), "recording the LeaderElection Event timed out");
        }
        leadership
    }
}

/// Renews every retry period; each round retries until the renew deadline.
async fn keep_renewing(
    lock: Arc<LeaseLock>,
    master_status: Gauge,
    report: watch::Sender<Option<LeadershipLost>>,
) {
    let config = &lock.config;
    #[cfg(feature = "fault-injection")]
    if failpoint::renewals_stalled() {
        tracing::warn!(variable = failpoint::VARIABLE, "the renewer is stalled");
        std::future::pending::<()>().await;
    }
    let reason = loop {
        sleep(config.retry_period).await;
        let deadline = Instant::now() + config.renew_deadline;
        let lost = loop {
            let last_error = match timeout_at(deadline, lock.try_acquire_or_renew()).await {
                Ok(Attempt::Held) => break None,
                Ok(Attempt::HeldBy(holder)) => {
                    break Some(LeadershipLost::TakenOver {
                        lease: config.lease_key(),
                        holder,
                    });
                }
                Ok(Attempt::Failed(error)) => {
                    tracing::warn!(%error, lease = %config.lease_key(), "cannot renew the leader lease");
                    error.to_string()
                }
                Err(_) => "the request timed out".to_string(),
            };
            if Instant::now() + config.retry_period >= deadline {
                sleep(deadline.saturating_duration_since(Instant::now())).await;
                break Some(LeadershipLost::NotRenewed {
                    lease: config.lease_key(),
                    deadline: config.renew_deadline,
                    last_error,
                });
            }
            sleep(config.retry_period).await;
        };
        if let Some(reason) = lost {
            break reason;
        }
    };
    master_status.set(0);
    tracing::error!(%reason, "leaderelection lost");
    report.send_replace(Some(reason));
}

/// This process's leadership. Dropping it stops renewing (the Lease is kept
/// and expires); it does not release the Lease.
pub struct Leadership {
    lost: watch::Receiver<Option<LeadershipLost>>,
    renewer: JoinHandle<()>,
    health: LeaderHealth,
    master_status: Gauge,
    lease: String,
}

impl Leadership {
    /// Resolves once leadership is lost; the process should then exit.
    pub fn lost(&self) -> impl Future<Output = LeadershipLost> + Send + 'static {
        let mut lost = self.lost.clone();
        let lease = self.lease.clone();
        async move {
            match lost.wait_for(Option::is_some).await {
                Ok(reason) => reason
                    .clone()
                    .unwrap_or(LeadershipLost::RenewerStopped { lease }),
                Err(_) => LeadershipLost::RenewerStopped { lease },
            }
        }
    }

    /// Stops renewing and releases the Lease, so a standby takes over at
    /// once; the process should then exit with status 1.
    pub async fn step_down(self, reason: String) -> LeadershipLost {
        let lease = self.lease.clone();
        self.release().await;
        let lost = LeadershipLost::SteppedDown { lease, reason };
        tracing::error!(reason = %lost, "leaderelection lost");
        lost
    }

    /// Stops renewing and gives the Lease up (within the renew deadline),
    /// as a process that is shutting down does; false when it could not be
    /// written, so it expires after the lease duration instead.
    pub async fn release(self) -> bool {
        self.renewer.abort();
        self.master_status.set(0);
        let lock = &self.health.lock;
        match timeout(lock.config.renew_deadline, lock.release()).await {
            Ok(Ok(())) => {
                tracing::info!(lease = %self.lease, "released the leader lease");
                true
            }
            Ok(Err(error)) => {
                tracing::warn!(%error, lease = %self.lease, "cannot release the leader lease; it expires after the lease duration");
                false
            }
            Err(_) => {
                tracing::warn!(lease = %self.lease, "releasing the leader lease timed out; it expires after the lease duration");
                false
            }
        }
    }

    /// False once the Lease has gone unrenewed for the lease duration plus
    /// [`HEALTH_TOLERANCE`] while this process still believes it leads.
    pub fn healthy(&self) -> bool {
        self.health.check().is_ok()
    }
}

impl Drop for Leadership {
    fn drop(&mut self) {
        self.renewer.abort();
        self.master_status.set(0);
    }
}

/// The `leaderElection` health check. Its API has no Kubernetes types, so
/// the server only sees a closure over [`LeaderHealth::check`].
#[derive(Clone)]
pub struct LeaderHealth {
    lock: Arc<LeaseLock>,
}

impl LeaderHealth {
    /// `Err` once the Lease has not been renewed for longer than the lease
    /// duration plus [`HEALTH_TOLERANCE`]; feeds `/healthz`.
    pub fn check(&self) -> Result<(), String> {
        self.lock.check_health()
    }
}

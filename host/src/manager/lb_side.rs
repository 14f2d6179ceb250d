//! The load-balancer side, set up apart from the node side: ALB not enabled
//! on the gateway, a misnamed network or a role without IP Space rights
//! stop load balancers only. It is retried with backoff; meanwhile
//! `/readyz` (check `load-balancer`), the `vcd_ccm_load_balancer_ready`
//! gauge and a Warning Event on each LoadBalancer Service say why.

use std::sync::Arc;
use std::time::Duration;

use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;

use crate::controllers::service::LbSide;
use crate::lb::{AllocationJournal, ClusterIdentity, LbConfig, LoadBalancers, TlsSecrets};
use crate::policy::Registry as Policies;
use crate::text::{EVENT_MESSAGE_BYTES, sanitize};
use crate::vcd::VcdClient;

/// The first retry; each failure doubles it up to [`LAST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_secs(10);
const LAST_RETRY: Duration = Duration::from_secs(300);

/// What ties the load balancer's VCD objects to this cluster: its identity
/// in every tag, the journal of IP Space allocations on its Services, and
/// the Secrets its Services name as certificates.
pub struct LbOwnership {
    pub identity: ClusterIdentity,
    pub journal: Arc<dyn AllocationJournal>,
    pub tls_secrets: Arc<dyn TlsSecrets>,
}

/// What the load balancer is built from.
pub struct LbSetup {
    pub client: VcdClient,
    pub policies: Arc<Policies>,
    pub config: LbConfig,
}

impl LbSetup {
    /// Builds the load balancer, retrying until it works, and publishes
    /// each state on `side` (and 0 or 1 on `ready`).
    pub async fn run(self, ownership: LbOwnership, side: watch::Sender<LbSide>, ready: Gauge) {
        let mut delay = FIRST_RETRY;
        loop {
            let built = LoadBalancers::new(
                self.client.clone(),
                self.policies.clone(),
                self.config.clone(),
                ownership.identity.clone(),
                ownership.journal.clone(),
                ownership.tls_secrets.clone(),
            )
            .await;
            match built {
                Ok(lb) => {
                    ready.set(1);
                    side.send_replace(LbSide::Ready(Arc::new(lb)));
                    return;
                }
                Err(error) => {
                    let reason = sanitize(&error.to_string(), EVENT_MESSAGE_BYTES);
                    tracing::error!(%reason, retry_in = ?delay, "cannot set up the load-balancer side; nodes are served meanwhile");
                    ready.set(0);
                    side.send_replace(LbSide::Pending(reason));
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(LAST_RETRY);
                }
            }
        }
    }
}

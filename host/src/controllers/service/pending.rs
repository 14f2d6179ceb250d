//! While the load-balancer side is not working, the Services that wait for
//! it are told why: a Warning Event on each LoadBalancer Service, repeated
//! (and folded into its count) until it works, and the same on its
//! `vcd-ccm.io/LoadBalancerReady` condition.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Service;
use kube::runtime::reflector::Store;
use tokio::sync::watch;

use super::LbSide;
use super::condition::Readiness;
use super::predicates::ClassFilter;
use super::sync::object_ref;
use super::writes::ServiceWrites;
use crate::controllers::{EventRecorder, EventType};
use crate::lb::LoadBalancers;

/// How often waiting Services are told again (new ones included).
const REPORT_EVERY: Duration = Duration::from_secs(30);

/// The Event reason of a Service waiting for the load-balancer side.
pub const UNAVAILABLE: &str = "LoadBalancerUnavailable";

pub(super) struct PendingReporter {
    pub recorder: EventRecorder,
    pub writes: ServiceWrites,
    pub services: Store<Service>,
    pub class: ClassFilter,
}

impl PendingReporter {
    /// Reports on every waiting Service until the side is ready; `None`
    /// when the side is gone for good (the process is stopping).
    pub async fn until_ready(
        &self,
        mut side: watch::Receiver<LbSide>,
    ) -> Option<Arc<LoadBalancers>> {
        loop {
            let reason = match &*side.borrow_and_update() {
                LbSide::Ready(lb) => return Some(lb.clone()),
                LbSide::Pending(reason) => reason.clone(),
            };
            self.report(&reason).await;
            if let Ok(Err(_closed)) = tokio::time::timeout(REPORT_EVERY, side.changed()).await {
                return None;
            }
        }
    }

    async fn report(&self, reason: &str) {
        let message = format!(
            "The load-balancer side of VMware Cloud Director is not working, so this Service gets no load balancer yet; it is retried: {reason}"
        );
        for service in self.services.state() {
            if self.class.wants_load_balancer(&service) {
                self.recorder
                    .publish(
                        &object_ref(&service),
                        EventType::Warning,
                        UNAVAILABLE,
                        &message,
                    )
                    .await;
                let waiting = Readiness::not_ready(UNAVAILABLE, &message);
                self.writes.set_condition(&service, &waiting).await;
            }
        }
    }
}

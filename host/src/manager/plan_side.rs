//! What `vcd-ccm plan` runs on: the load balancer of `run`'s settings, with
//! a VCD client that refuses every write before it is sent and an
//! allocation journal that notes nothing, beside a Kubernetes client that
//! only reads (but for a service account's new one-time refresh token,
//! written back to its Secret as `run` does, since VCD voids the old one).

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::watch;

use super::cloud::{CloudSide, cluster_identity};
use super::settings::kube_client;
use super::{Settings, SharedRegistry, StartError, credential_rotation, pull_secrets, write};
use crate::controllers::service::KubeTlsSecrets;
use crate::lb::journal::{ANNOTATION, AllocationJournal, JournalError};
use crate::lb::{LbError, LoadBalancers, ServiceSpec};
use crate::ratelimit::ThrottleMetrics;
use crate::vcd::VcdError;

/// Why the plan side could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum PlanSideError {
    /// The settings are wrong, or Kubernetes or the policies cannot be read.
    #[error(transparent)]
    Start(#[from] StartError),
    /// VCD cannot be reached or refuses the login.
    #[error("connecting to VMware Cloud Director: {0}")]
    Connect(#[from] VcdError),
    /// The gateway, its load balancer or its address source cannot be read.
    #[error("setting up the load balancer: {0}")]
    LoadBalancer(#[from] LbError),
}

/// The read-only load balancer and the Kubernetes client it plans for.
pub struct PlanSide {
    /// Plans; every write it would send VCD is refused unsent.
    pub lb: LoadBalancers,
    /// Reads the Services, Nodes, EndpointSlices and Namespaces.
    pub kube: kube::Client,
}

impl PlanSide {
    /// Sets up from `run`'s settings: policies, VCD login, gateway.
    pub async fn start(settings: &Settings) -> Result<Self, PlanSideError> {
        let metrics = SharedRegistry::default();
        let throttle = ThrottleMetrics::register(&mut write(&metrics));
        let kube = kube_client(settings, &throttle)?;
        let (_, leading) = watch::channel(true);
        let rotation = credential_rotation(settings, leading)?;
        let pull_secrets = pull_secrets(settings, &kube);
        let cloud = CloudSide::prepare(settings, &metrics, Some(rotation), pull_secrets).await?;
        let identity = cluster_identity(&kube).await?;
        let lb = cloud
            .read_only_load_balancers(
                identity,
                Arc::new(NoteNothing),
                Arc::new(KubeTlsSecrets::new(kube.clone())),
            )
            .await?;
        Ok(Self { lb, kube })
    }
}

/// Reads the notes of allocations in progress; notes nothing (a plan
/// allocates nothing).
struct NoteNothing;

impl AllocationJournal for NoteNothing {
    fn noted(&self, service: &ServiceSpec) -> Option<String> {
        service.annotations.get(ANNOTATION).cloned()
    }

    fn note<'a>(
        &'a self,
        service: &'a ServiceSpec,
        _note: String,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        let refused = format!(
            "not noting an IP Space allocation for {}: a plan only reads",
            service.key()
        );
        Box::pin(async move { Err(refused.into()) })
    }
}

//! The load balancer: for each LoadBalancer Service, the NSX ALB pools,
//! virtual services and (one-arm) DNAT rules on the cluster's edge gateway.
//!
//! A reconcile observes what the Service owns (by ownership tag), asks the
//! Service's policy, checks the decision against VCD, plans the objects,
//! diffs and applies only the differences ([`reconcile`]). `README.md`
//! beside this file describes modes, names, tags and errors.

mod apply;
pub mod config;
mod context;
mod decide;
mod delete;
pub mod errors;
mod internal_pools;
pub mod journal;
mod naming;
mod newer_format;
mod observe;
mod observed;
mod operations;
mod ownership;
mod plan;
mod planning;
mod preview;
pub mod ranges;
mod reconcile;
pub mod service;
mod source_ranges;
mod sweep;
pub mod tls;
mod vips;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

pub use config::{LbConfig, Mode, OneArm};
pub use decide::sharing::SHARING_KEY_ANNOTATION;
pub use errors::LbError;
pub use journal::AllocationJournal;
pub use observe::health::PoolHealth;
pub use ownership::ClusterIdentity;
pub use plan::op::Action;
pub use preview::PlannedWrite;
pub use ranges::AddressRange;
pub use service::{FamilyPolicy, Ingress, IpMode, LbStatus, NodeSpec, PortSpec, ServiceSpec};
pub use source_ranges::SOURCE_RANGES_ANNOTATION;
pub use sweep::SweepReport;
pub use tls::TlsSecrets;

// The preflight checks read the gateway's features and addresses the way
// the engine does.
pub(crate) use internal_pools::{InternalPools, add_private_space};
pub(crate) use observe::catalog::Features;
pub(crate) use observe::ipam::{IpSource, used_addresses};

use context::Context;

use crate::policy::Registry;
use crate::vcd::VcdClient;

/// The load-balancer engine of one cluster on one edge gateway: the front
/// over the stages, each a function of the engine's [`Context`].
pub struct LoadBalancers {
    ctx: Context,
}

impl LoadBalancers {
    /// Checks the config and reads what stays fixed: the placement (org,
    /// VDC, network, gateway), the gateway's load-balancer features and its
    /// address source. `identity` tells this Kubernetes cluster's objects
    /// from those of another one configured with the same `clusterid`;
    /// `journal` keeps IP Space allocations findable across a crash;
    /// `tls_secrets` reads the Secrets Services name as certificates.
    pub async fn new(
        client: VcdClient,
        registry: Arc<Registry>,
        config: LbConfig,
        identity: ClusterIdentity,
        journal: Arc<dyn AllocationJournal>,
        tls_secrets: Arc<dyn TlsSecrets>,
    ) -> Result<Self, LbError> {
        let ctx = Context::new(client, registry, config, identity, journal, tls_secrets).await?;
        Ok(Self { ctx })
    }

    /// The policies deciding this engine's Services.
    pub fn policies(&self) -> &Arc<Registry> {
        &self.ctx.registry
    }

    /// The Service's load balancer as VCD holds it: `None` when it owns no
    /// object on the gateway.
    pub async fn get(&self, service: &ServiceSpec) -> Result<Option<LbStatus>, LbError> {
        operations::get(&self.ctx, service).await
    }

    /// Creates or converges the Service's load balancer; returns the
    /// ingress to write to `status.loadBalancer`.
    pub async fn ensure(
        &self,
        service: &ServiceSpec,
        nodes: &[NodeSpec],
    ) -> Result<LbStatus, LbError> {
        operations::ensure(&self.ctx, service, nodes).await
    }

    /// The node set changed: the same reconcile, which then rewrites only
    /// the pools' members. Returns its status: when to reconcile again (a
    /// drain has started or is under way), and its warnings.
    pub async fn update(
        &self,
        service: &ServiceSpec,
        nodes: &[NodeSpec],
    ) -> Result<LbStatus, LbError> {
        operations::ensure(&self.ctx, service, nodes).await
    }

    /// Whether pools of `Local` Services probe the Nodes'
    /// `healthCheckNodePort` (API 39.0+), and so take every Node as a
    /// member rather than only those with a ready endpoint.
    pub fn probes_local_nodes(&self) -> bool {
        self.ctx.monitoring.tenant
    }

    /// Reads the gateway's load-balancer objects again now, for every
    /// reconcile after it (drift repair compares Services against it).
    pub async fn refresh_gateway(&self) -> Result<(), LbError> {
        operations::refresh_gateway(&self.ctx).await
    }

    /// What VCD says of each Service's pools, by Service uid: one paged
    /// list of the gateway's pool summaries.
    pub async fn health(&self) -> Result<HashMap<String, PoolHealth>, LbError> {
        let ctx = &self.ctx;
        observe::health::read(
            &ctx.client,
            &ctx.gateway.id,
            &ctx.config.cluster_id,
            &ctx.identity,
        )
        .await
    }

    /// Removes every object the Service owns and releases its IP Space
    /// allocations. Needs only namespace, name and uid of the Service.
    pub async fn delete(&self, service: &ServiceSpec) -> Result<(), LbError> {
        delete::delete(&self.ctx, service).await
    }

    /// Deletes every object tagged with this cluster whose Service uid is
    /// not in `live_uids`. Objects of other clusters and untagged objects
    /// are never touched.
    pub async fn sweep(&self, live_uids: &HashSet<String>) -> Result<SweepReport, LbError> {
        sweep::sweep(&self.ctx, live_uids).await
    }

    /// The writes a reconcile of `service` with `nodes` would make now.
    pub async fn plan_ensure(
        &self,
        service: &ServiceSpec,
        nodes: &[NodeSpec],
    ) -> Result<Vec<PlannedWrite>, LbError> {
        preview::plan_ensure(&self.ctx, service, nodes).await
    }

    /// The deletes a delete of `service` would make now.
    pub async fn plan_delete(&self, service: &ServiceSpec) -> Result<Vec<PlannedWrite>, LbError> {
        preview::plan_delete(&self.ctx, service).await
    }

    /// The deletes the sweep would make of the objects of Services that
    /// are not in `live_uids`, by `namespace/name (uid)`.
    pub async fn plan_sweep(
        &self,
        live_uids: &HashSet<String>,
    ) -> Result<BTreeMap<String, Vec<PlannedWrite>>, LbError> {
        preview::plan_sweep(&self.ctx, live_uids).await
    }
}

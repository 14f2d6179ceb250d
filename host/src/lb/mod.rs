//! The load balancer: for each LoadBalancer Service, the NSX ALB pools,
//! virtual services and (one-arm) DNAT rules on the cluster's edge gateway.
//!
//! A reconcile observes what the Service owns (by ownership tag), asks the
//! Service's policy, checks the decision against VCD, plans the objects,
//! diffs and applies only the differences ([`reconcile`]). `README.md`
//! beside this file describes modes, names, tags and errors.

mod apply;
pub mod config;
mod decide;
mod delete;
pub mod errors;
pub mod journal;
mod naming;
mod newer_format;
mod observe;
mod operations;
mod ownership;
mod plan;
mod preview;
mod ranges;
mod reconcile;
pub mod service;
mod source_ranges;
mod sweep;
pub mod tls;
mod vips;

use std::sync::Arc;

pub use config::{LbConfig, Mode, OneArm};
pub use decide::sharing::SHARING_KEY_ANNOTATION;
pub use errors::LbError;
pub use journal::AllocationJournal;
pub use ownership::ClusterIdentity;
pub use plan::op::Action;
pub use preview::PlannedWrite;
pub use service::{FamilyPolicy, Ingress, IpMode, LbStatus, NodeSpec, PortSpec, ServiceSpec};
pub use source_ranges::SOURCE_RANGES_ANNOTATION;
pub use sweep::SweepReport;
pub use tls::TlsSecrets;

use observe::catalog::Catalog;
// The preflight checks read the gateway's features and addresses the way
// the engine does.
use apply::rde::RdeStatus;
use naming::Names;
use newer_format::NewerFormats;
pub(crate) use observe::catalog::Features;
pub(crate) use observe::ipam::{IpSource, used_addresses};
use observe::snapshot::{GATEWAY_REFRESH, GatewaySnapshot};
use ownership::OwnerTag;
use plan::member_groups::{ClusterGroup, MemberGroups};
use tls::UploadPins;

use crate::policy::Registry;
use crate::policy::model::{Capabilities, Cluster};
use crate::vcd::VcdClient;
use crate::vcd::resources::EntityRef;

/// The load-balancer engine of one cluster on one edge gateway.
pub struct LoadBalancers {
    client: VcdClient,
    registry: Arc<Registry>,
    config: LbConfig,
    identity: ClusterIdentity,
    journal: Arc<dyn AllocationJournal>,
    /// Reads the Secrets named by `vcd-ccm.io/tls-secret`.
    tls_secrets: Arc<dyn TlsSecrets>,
    /// Uploads reconciles in progress use.
    upload_pins: Arc<UploadPins>,
    mode: Mode,
    gateway: EntityRef,
    /// The org and VDC, which own the firewall's port profiles.
    org: EntityRef,
    vdc: EntityRef,
    cluster: Cluster,
    source: IpSource,
    features: Features,
    catalog: Catalog,
    snapshot: GatewaySnapshot,
    rde: RdeStatus,
    /// Objects of a newer tag format already logged.
    newer_formats: NewerFormats,
    /// The IP sets pools take their members from (API 37.1+).
    member_groups: MemberGroups,
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
        let mode = config.check()?;
        let setup = |action: &str| LbError::vcd("(setup)", action.to_string());
        let placement = client
            .resolve_placement(&config.vdc, &config.network)
            .await
            .map_err(setup("resolving loadbalancer.network and its edge gateway"))?;
        let gateway = &placement.gateway;
        config.check_gateway(&gateway.name, gateway.is_distributed_only())?;
        let features = Features::read(&client, &gateway.id)
            .await
            .map_err(setup("reading the gateway's load balancer"))?;
        let source = IpSource::discover(&client, gateway, config.vip_subnet)
            .await
            .map_err(setup("reading the gateway's IP Spaces"))?;
        let cluster = Cluster {
            cluster_id: config.cluster_id.clone(),
            org: placement.org.name.clone().unwrap_or_default(),
            vdc: placement.vdc.name.clone().unwrap_or_default(),
            gateway: gateway.name.clone(),
            vcd_api_version: client.api_version().to_string(),
            capabilities: Capabilities {
                shared_vip: config.enable_virtual_service_shared_ip,
                ip_spaces: source.is_spaces(),
                one_arm: config.one_arm.is_some(),
                premium: features.premium,
                transparent_mode: features.transparent_mode,
                http_rules: features.http_rules,
            },
        };
        let rde = RdeStatus::new(client.clone(), &config.cluster_id);
        let cluster_group = ClusterGroup::new(&config.cluster_id, identity.as_str());
        Ok(Self {
            gateway: EntityRef::new(gateway.name.clone(), gateway.id.clone()),
            org: placement.org.clone(),
            vdc: placement.vdc.clone(),
            client,
            registry,
            config,
            identity,
            journal,
            tls_secrets,
            upload_pins: Arc::default(),
            mode,
            cluster,
            source,
            features,
            catalog: Catalog::default(),
            snapshot: GatewaySnapshot::new(
                GATEWAY_REFRESH,
                !placement.gateway.is_distributed_only(),
            ),
            rde,
            newer_formats: NewerFormats::default(),
            member_groups: MemberGroups::new(cluster_group),
        })
    }

    /// The policies deciding this engine's Services.
    pub fn policies(&self) -> &Arc<Registry> {
        &self.registry
    }

    fn owner(&self, service: &ServiceSpec) -> OwnerTag {
        OwnerTag {
            cluster_id: self.config.cluster_id.clone(),
            identity: Some(self.identity.as_str().to_string()),
            namespace: service.namespace.clone(),
            name: service.name.clone(),
            uid: service.uid.clone(),
            // Checked before any write; an unusable key shares nothing.
            share: decide::sharing::sharing_key(service).ok().flatten(),
        }
    }

    fn names(&self, service: &ServiceSpec) -> Names {
        Names::new(
            &self.config.cluster_id,
            &service.namespace,
            &service.name,
            &service.uid,
        )
    }
}

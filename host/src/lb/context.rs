//! What every stage of a reconcile reads: the cluster's settings and
//! identity, the placement read once at start (org, VDC, gateway, address
//! source, features), and the caches shared by all reconciles. The stages
//! are functions over a `&Context`; `LoadBalancers` is the front over one.

use std::sync::Arc;

use crate::lb::apply::rde::RdeStatus;
use crate::lb::config::{LbConfig, Mode};
use crate::lb::decide::sharing;
use crate::lb::errors::LbError;
use crate::lb::internal_pools::{self, InternalPools};
use crate::lb::journal::AllocationJournal;
use crate::lb::naming::Names;
use crate::lb::newer_format::NewerFormats;
use crate::lb::observe::catalog::{Catalog, Features};
use crate::lb::observe::ipam::IpSource;
use crate::lb::observe::monitors::Monitors;
use crate::lb::observe::objects::GatewayView;
use crate::lb::observe::snapshot::{GATEWAY_REFRESH, GatewaySnapshot};
use crate::lb::ownership::{ClusterIdentity, FORMAT, OwnerTag};
use crate::lb::plan::member_groups::MemberGroups;
use crate::lb::plan::member_sets::ClusterGroup;
use crate::lb::plan::monitors::{MonitorNames, Monitoring};
use crate::lb::service::ServiceSpec;
use crate::lb::tls::{TlsSecrets, UploadPins};
use crate::policy::Registry;
use crate::policy::model::{Capabilities, Cluster};
use crate::vcd::VcdClient;
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::health_monitor::TENANT_MONITORS_SINCE;

/// The load-balancer engine of one cluster on one edge gateway.
pub(in crate::lb) struct Context {
    pub(in crate::lb) client: VcdClient,
    pub(in crate::lb) registry: Arc<Registry>,
    pub(in crate::lb) config: LbConfig,
    pub(in crate::lb) identity: ClusterIdentity,
    pub(in crate::lb) journal: Arc<dyn AllocationJournal>,
    /// Reads the Secrets named by `vcd-ccm.io/tls-secret`.
    pub(in crate::lb) tls_secrets: Arc<dyn TlsSecrets>,
    /// Uploads reconciles in progress use.
    pub(in crate::lb) upload_pins: Arc<UploadPins>,
    pub(in crate::lb) mode: Mode,
    pub(in crate::lb) gateway: EntityRef,
    /// The org, and the gateway's owner (its VDC or data-center group):
    /// the firewall's port profiles are created in that context.
    pub(in crate::lb) org: EntityRef,
    pub(in crate::lb) gateway_owner: EntityRef,
    pub(in crate::lb) cluster: Cluster,
    pub(in crate::lb) source: IpSource,
    /// Where internal addresses come from (empty: none offered).
    pub(in crate::lb) internal: InternalPools,
    pub(in crate::lb) features: Features,
    pub(in crate::lb) catalog: Catalog,
    pub(in crate::lb) snapshot: GatewaySnapshot,
    pub(in crate::lb) rde: RdeStatus,
    /// Objects of a newer tag format already logged.
    pub(in crate::lb) newer_formats: NewerFormats,
    /// The IP sets pools take their members from (API 37.1+).
    pub(in crate::lb) member_groups: MemberGroups,
    /// The cluster's tenant health monitors (API 39.0+).
    pub(in crate::lb) monitors: Arc<Monitors>,
    pub(in crate::lb) monitor_names: MonitorNames,
    pub(in crate::lb) monitoring: Monitoring,
}

impl Context {
    /// Checks the config and reads what stays fixed: the placement (org,
    /// VDC, network, gateway), the gateway's load-balancer features and its
    /// address source. `identity` tells this Kubernetes cluster's objects
    /// from those of another one configured with the same `clusterid`;
    /// `journal` keeps IP Space allocations findable across a crash;
    /// `tls_secrets` reads the Secrets Services name as certificates.
    pub(in crate::lb) async fn new(
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
            .tenancy()
            .placement(&config.vdc, &config.network)
            .await
            .map_err(setup("resolving loadbalancer.network and its edge gateway"))?;
        let gateway = &placement.gateway;
        config.check_gateway(&gateway.name, gateway.is_distributed_only())?;
        let features = Features::read(&client, &gateway.id)
            .await
            .map_err(setup("reading the gateway's load balancer"))?;
        let mut source = IpSource::discover(&client, gateway, config.vip_subnet)
            .await
            .map_err(setup("reading the gateway's IP Spaces"))?;
        if let Some(name) = &config.internal_space {
            internal_pools::add_private_space(&client, &mut source, &gateway.name, name).await?;
        }
        let internal = InternalPools::new(config.internal_ranges()?, &source)?;
        let monitoring = Monitoring {
            tenant: client.api_version() >= TENANT_MONITORS_SINCE,
            kube_proxy: config.kube_proxy_health_check,
        };
        if monitoring.kube_proxy && !monitoring.tenant {
            tracing::warn!(
                version = %client.api_version(),
                "loadbalancer.kubeProxyHealthCheck has no effect: probes need tenant health monitors, which VCD offers from API 39.0 (VCD 10.6)"
            );
        }
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
                health_monitors: monitoring.tenant,
                internal_addresses: !internal.is_empty() || config.internal_space.is_some(),
                // Only an IP Space allocation can outlive its Service.
                retained_addresses: source.is_spaces(),
            },
        };
        let rde = RdeStatus::new(client.clone(), &config.cluster_id);
        let cluster_group = ClusterGroup::new(&config.cluster_id, identity.as_str());
        let monitor_tag = format!(
            "vcd-ccm format={FORMAT} cluster={} kube={} monitor=shared",
            config.cluster_id,
            identity.as_str()
        );
        let monitor_names = MonitorNames::new(&config.cluster_id, identity.as_str(), &monitor_tag);
        Ok(Self {
            gateway: EntityRef::new(gateway.name.clone(), gateway.id.clone()),
            org: placement.org.clone(),
            gateway_owner: gateway
                .owner_ref
                .clone()
                .unwrap_or_else(|| placement.vdc.clone()),
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
            internal,
            features,
            catalog: Catalog::default(),
            snapshot: GatewaySnapshot::new(
                GATEWAY_REFRESH,
                !placement.gateway.is_distributed_only(),
            ),
            rde,
            newer_formats: NewerFormats::default(),
            member_groups: MemberGroups::new(cluster_group),
            monitors: Arc::new(Monitors::new(monitor_tag)),
            monitor_names,
            monitoring,
        })
    }

    /// The gateway's objects from the shared snapshot (read when stale);
    /// a failure is named for `service` (or `(sweep)`).
    pub(in crate::lb) async fn gateway_view(
        &self,
        service: &str,
    ) -> Result<Arc<GatewayView>, LbError> {
        self.snapshot
            .view(&self.client, &self.gateway.id)
            .await
            .map_err(LbError::vcd(
                service,
                "reading the gateway's load balancer objects".into(),
            ))
    }

    /// Whether `ip` is an internal address: of an internal range or of the
    /// PRIVATE IP Space.
    pub(in crate::lb) fn is_internal(&self, ip: std::net::IpAddr) -> bool {
        self.internal.pool_of(ip).is_some() || self.source.is_private(ip)
    }

    pub(in crate::lb) fn owner(&self, service: &ServiceSpec) -> OwnerTag {
        OwnerTag {
            cluster_id: self.config.cluster_id.clone(),
            identity: Some(self.identity.as_str().to_string()),
            namespace: service.namespace.clone(),
            name: service.name.clone(),
            uid: service.uid.clone(),
            // Checked before any write; an unusable key shares nothing.
            share: sharing::sharing_key(service).ok().flatten(),
        }
    }

    pub(in crate::lb) fn names(&self, service: &ServiceSpec) -> Names {
        Names::new(
            &self.config.cluster_id,
            &service.namespace,
            &service.name,
            &service.uid,
        )
    }
}

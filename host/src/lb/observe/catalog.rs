//! Slow-changing facts read from VCD and kept between reconciles: the
//! certificate library (refreshed after a short time, or at once when a
//! decision names an alias it lacks; our own uploads and deletes are
//! applied to it as they happen), the gateway's service engine group
//! assignments (refreshed after the same time, or at once when a virtual
//! service create fails), and the application profiles the gateway's load
//! balancer offers (read once).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::policy::model::AppProfile;
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::certificate::CertificateItem;
use crate::vcd::resources::seg::{self, SegAssignment};
use crate::vcd::version::ApiVersion;
use crate::vcd::{VcdClient, VcdError};

/// How long a read of the certificate library or of the engine group
/// assignments is trusted.
const CATALOG_TTL: Duration = Duration::from_secs(30);

#[derive(Debug, Default)]
pub struct Catalog {
    certificates: Mutex<Option<(Instant, Vec<CertificateItem>)>>,
    engine_groups: Mutex<Option<(Instant, Vec<SegAssignment>)>>,
}

/// The first API version with transparent mode.
const TRANSPARENT_MODE: ApiVersion = ApiVersion::new(37, 1);
/// The first API version with virtual services' HTTP policies.
pub const HTTP_RULES: ApiVersion = ApiVersion::new(38, 0);

/// The gateway's load-balancer features: the profiles it offers, whether
/// PREMIUM (L4 TLS, more algorithms) is on, and whether virtual services
/// may run in transparent mode (preserving client addresses), and whether
/// virtual services take HTTP rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Features {
    pub profiles: Vec<AppProfile>,
    pub premium: bool,
    pub transparent_mode: bool,
    pub http_rules: bool,
    /// The gateway's load balancer has an IPv6 service network, so virtual
    /// services can have IPv6 addresses.
    pub ipv6_service_network: bool,
}

impl Features {
    pub async fn read(client: &VcdClient, gateway_id: &str) -> Result<Self, VcdError> {
        let config = client.gateways().load_balancer(gateway_id).await?;
        if config.enabled == Some(false) {
            return Err(VcdError::Missing {
                what: "enabled load balancer",
                name: gateway_id.to_string(),
                scope: "on the edge gateway (ask the provider to enable NSX ALB on it)".to_string(),
            });
        }
        let premium = config.supported_feature_set.as_deref() == Some("PREMIUM");
        let mut profiles = vec![
            AppProfile::L4Tcp,
            AppProfile::L4Udp,
            AppProfile::Http,
            AppProfile::Https,
        ];
        if premium {
            profiles.push(AppProfile::L4Tls);
        }
        let transparent_mode = client.api_version() >= TRANSPARENT_MODE
            && config.transparent_mode_enabled == Some(true);
        Ok(Self {
            profiles,
            premium,
            transparent_mode,
            http_rules: client.api_version() >= HTTP_RULES,
            ipv6_service_network: config
                .ipv6_service_network_definition
                .is_some_and(|d| !d.trim().is_empty()),
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

impl Catalog {
    /// The certificate library; `fresh` forces a read.
    pub async fn certificates(
        &self,
        client: &VcdClient,
        fresh: bool,
    ) -> Result<Vec<CertificateItem>, VcdError> {
        let cached = lock(&self.certificates)
            .as_ref()
            .filter(|(read_at, _)| read_at.elapsed() < CATALOG_TTL)
            .map(|(_, items)| items.clone());
        if let Some(items) = cached.filter(|_| !fresh) {
            return Ok(items);
        }
        let items = client.certificates().list().await?;
        *lock(&self.certificates) = Some((Instant::now(), items.clone()));
        Ok(items)
    }

    /// Adds an item this process uploaded to the cached library, so the next
    /// decision sees it without a read.
    pub fn remember_certificate(&self, item: CertificateItem) {
        if let Some((_, items)) = lock(&self.certificates).as_mut() {
            items.retain(|c| c.alias != item.alias);
            items.push(item);
        }
    }

    /// Drops an item this process deleted from the cached library.
    pub fn forget_certificate(&self, id: &str) {
        if let Some((_, items)) = lock(&self.certificates).as_mut() {
            items.retain(|c| c.id != id);
        }
    }

    /// The service engine groups assigned to the gateway, with their room.
    pub async fn engine_groups(
        &self,
        client: &VcdClient,
        gateway_id: &str,
    ) -> Result<Vec<SegAssignment>, VcdError> {
        let cached = lock(&self.engine_groups)
            .as_ref()
            .filter(|(read_at, _)| read_at.elapsed() < CATALOG_TTL)
            .map(|(_, groups)| groups.clone());
        if let Some(groups) = cached {
            return Ok(groups);
        }
        let groups = client
            .service_engine_groups()
            .assignments(gateway_id)
            .await?;
        *lock(&self.engine_groups) = Some((Instant::now(), groups.clone()));
        Ok(groups)
    }

    /// The group named `wanted`, else the first with room. The cached room
    /// only shrinks between reads (deletes are not counted), so a choice
    /// that fails on it is made again on a fresh read.
    pub async fn engine_group(
        &self,
        client: &VcdClient,
        gateway_id: &str,
        wanted: Option<&str>,
    ) -> Result<EntityRef, VcdError> {
        let groups = self.engine_groups(client, gateway_id).await?;
        if let Ok(group) = seg::choose(&groups, gateway_id, wanted) {
            return Ok(group);
        }
        self.forget_engine_groups();
        let fresh = self.engine_groups(client, gateway_id).await?;
        seg::choose(&fresh, gateway_id, wanted)
    }

    /// A virtual service was created in or moved into `group_id`: the
    /// cached room shrinks until the next read, so the next Service does
    /// not count on room that is gone.
    pub fn count_virtual_service(&self, group_id: &str) {
        if let Some((_, groups)) = lock(&self.engine_groups).as_mut()
            && let Some(group) = groups
                .iter_mut()
                .find(|g| g.service_engine_group_ref.id == group_id)
        {
            let deployed = group.num_deployed_virtual_services.unwrap_or(0);
            group.num_deployed_virtual_services = Some(deployed + 1);
        }
    }

    /// A create failed, perhaps for want of room: read the groups again.
    pub fn forget_engine_groups(&self) {
        *lock(&self.engine_groups) = None;
    }
}

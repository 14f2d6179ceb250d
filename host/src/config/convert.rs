//! From the cloud config to the settings of the VCD client, the load
//! balancer and the node side.

use std::path::{Path, PathBuf};

use super::cloud::CloudConfig;
use super::credentials::credential_source;
use super::errors::ConfigError;
use crate::instances::{AddressPolicy, ClusterVApps, InstancesConfig, ZoneMap};
use crate::lb::{LbConfig, OneArm};
use crate::vcd::{ClientConfig, TlsOptions};

/// Where upstream reads the zones file (`vcloud-capvcd-zones` mounted).
pub const DEFAULT_ZONES_FILE: &str = "/opt/vmware-cloud-director/ccm/vcloud-cse-zones.yaml";

impl CloudConfig {
    /// The VCD client's settings. Credentials come from the mounted Secret
    /// in `secret_dir` when that directory exists, else from the file's
    /// `vcd.refreshtoken` or `vcd.user` and `vcd.secret`.
    pub fn client_config(&self, secret_dir: &Path) -> Result<ClientConfig, ConfigError> {
        let vcd = &self.file.vcd;
        let credentials = credential_source(vcd, &self.origin, secret_dir)?;
        let mut config = ClientConfig::new(&vcd.host, vcd.org.trim(), credentials);
        config.tls = TlsOptions {
            ca_bundle: vcd.ca_file.clone(),
            insecure: vcd.insecure,
        };
        config.rate_limit = vcd.requests_per_second;
        Ok(config)
    }

    /// The load-balancer settings of the cloud config.
    pub fn lb_config(&self) -> LbConfig {
        let lb = &self.file.loadbalancer;
        let cert_alias = lb.cert_alias.trim();
        LbConfig {
            cluster_id: self.cluster_id.clone(),
            vdc: self.file.vcd.vdc.trim().to_string(),
            network: lb.network.trim().to_string(),
            enable_virtual_service_shared_ip: lb.enable_virtual_service_shared_ip,
            one_arm: lb.one_arm.as_ref().map(|one_arm| OneArm {
                start_ip: one_arm.start_ip.to_string(),
                end_ip: one_arm.end_ip.to_string(),
            }),
            vip_subnet: lb.vip_subnet,
            cert_alias: (!cert_alias.is_empty()).then(|| cert_alias.to_string()),
            manage_firewall: lb.manage_firewall,
            internal: lb
                .internal
                .iter()
                .flat_map(|internal| &internal.ranges)
                .map(|range| (range.start_ip, range.end_ip))
                .collect(),
            internal_space: lb
                .internal
                .as_ref()
                .and_then(|internal| internal.ip_space.as_deref())
                .map(|name| name.trim().to_string()),
            claim_unused_allocations: lb.claim_unused_allocations,
            kube_proxy_health_check: lb.kube_proxy_health_check,
        }
    }

    /// The node side's settings; reads the zones file when
    /// `vcd.isZoneEnabledCluster` is true.
    pub fn instances_config(&self) -> Result<InstancesConfig, ConfigError> {
        let vapp_name = self.file.vapp_name.trim().to_string();
        let zone_enabled = self.file.vcd.is_zone_enabled_cluster;
        let vapps = if zone_enabled {
            ClusterVApps::ZonePrefix(vapp_name)
        } else {
            ClusterVApps::Named(vapp_name)
        };
        let mut config = InstancesConfig::new(vapps);
        if let Some(path) = zone_enabled.then(|| self.zones_file()) {
            config.zones = ZoneMap::load(&path).map_err(|error| ConfigError::Zones {
                origin: self.origin.clone(),
                error: Box::new(error),
            })?;
        }
        let nodes = &self.file.nodes;
        config.region = nodes.region.as_deref().map(|r| r.trim().to_string());
        config.addresses = AddressPolicy {
            other_nics: nodes.other_nics.into(),
            by_network: nodes
                .nics_by_network
                .iter()
                .map(|(network, role)| (network.clone(), (*role).into()))
                .collect(),
            hostname: nodes.hostname.into(),
        };
        Ok(config)
    }

    /// `nodes.zonesFile`, else upstream's fixed path.
    pub fn zones_file(&self) -> PathBuf {
        self.file
            .nodes
            .zones_file
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_ZONES_FILE))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::instances::{HostnameSource, NicRole};
    use crate::vcd::CredentialSource;

    const BASE: &str = "vcd:\n  host: https://vcd.example.com/\n  org: tenant1\n  vdc: vdc1\nloadbalancer:\n  network: net1\n  enableVirtualServiceSharedIP: true\nclusterid: c1\nvAppName: cluster1\n";

    fn parse(text: &str) -> CloudConfig {
        CloudConfig::from_yaml_with_env(text, "f.yaml", None).unwrap()
    }

    #[test]
    fn our_keys_reach_the_client_and_the_node_side() {
        let text = BASE.replace(
            "  vdc: vdc1\n",
            "  vdc: vdc1\n  caFile: /ca.pem\n  insecure: false\n  requestsPerSecond: 20\n",
        ) + "nodes:\n  region: eu-1\n  hostname: ComputerName\n  otherNics: ExternalIP\n  nicsByNetwork: {storage: InternalIP}\n";
        let config = parse(&text);
        let dir = tempfile::tempdir().unwrap();
        let client = config.client_config(dir.path()).unwrap();
        assert_eq!(client.host, "https://vcd.example.com");
        assert_eq!(client.tls.ca_bundle.as_deref(), Some(Path::new("/ca.pem")));
        assert_eq!(client.rate_limit, Some(20.0));
        assert!(matches!(client.credentials, CredentialSource::Files { .. }));

        let instances = config.instances_config().unwrap();
        assert_eq!(instances.vapps, ClusterVApps::Named("cluster1".into()));
        assert_eq!(instances.region.as_deref(), Some("eu-1"));
        assert_eq!(instances.addresses.hostname, HostnameSource::ComputerName);
        assert_eq!(
            instances.addresses.role_of(Some("storage")),
            NicRole::InternalIp
        );
        assert_eq!(
            instances.addresses.role_of(Some("other")),
            NicRole::ExternalIp
        );
    }

    #[test]
    fn defaults_match_upstream() {
        let config = parse(BASE);
        assert_eq!(config.zones_file(), Path::new(DEFAULT_ZONES_FILE));
        let instances = config.instances_config().unwrap();
        assert_eq!(instances.addresses, AddressPolicy::default());
        assert!(instances.zones.is_empty());
        assert_eq!(instances.region, None);
        let lb = config.lb_config();
        assert_eq!(lb.cert_alias, None);
        assert_eq!(lb.effective_cert_alias(), "c1-cert");
        let secret_dir = tempfile::tempdir().unwrap();
        let client = config.client_config(secret_dir.path()).unwrap();
        assert!(!client.tls.insecure);
        assert_eq!(client.tls.ca_bundle, None);
        assert_eq!(client.rate_limit, None);
    }

    #[test]
    fn zone_enabled_clusters_use_the_prefix_and_the_zones_file() {
        let dir = tempfile::tempdir().unwrap();
        let zones = dir.path().join("zones.yaml");
        std::fs::write(&zones, "zones:\n- name: z1\n  ovdcName: vdc1\n").unwrap();
        let text = BASE.replace(
            "  vdc: vdc1\n",
            "  vdc: vdc1\n  isZoneEnabledCluster: true\n",
        ) + &format!("nodes:\n  zonesFile: {}\n", zones.display());
        let instances = parse(&text).instances_config().unwrap();
        assert_eq!(instances.vapps, ClusterVApps::ZonePrefix("cluster1".into()));
        assert_eq!(instances.zones.zone_of("vdc1"), Some("z1"));
    }
}

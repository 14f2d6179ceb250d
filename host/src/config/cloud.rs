//! `CloudConfig`: the cloud config file, parsed strictly and checked as a
//! whole. What the parser cannot see (required keys, the cluster id's
//! environment fallback, rules across keys) is checked here.

use std::path::Path;

use super::errors::ConfigError;
use super::model::ConfigFile;

/// Upstream's fallback for `clusterid`.
pub const CLUSTER_ID_ENV: &str = "CLUSTER_ID";

/// A parsed and checked cloud config. Converts into the settings of the
/// VCD client, the load balancer and the node side.
#[derive(Debug, Clone)]
pub struct CloudConfig {
    /// The file (or other source) the config came from, for messages.
    pub(super) origin: String,
    pub(super) file: ConfigFile,
    /// `clusterid`, else the environment's `CLUSTER_ID`.
    pub(super) cluster_id: String,
}

impl CloudConfig {
    /// Reads and checks the file at `path`; `clusterid` falls back to the
    /// environment variable `CLUSTER_ID`.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Self::from_yaml(&text, &path.display().to_string())
    }

    /// Parses and checks `text`; `origin` names it in errors. `clusterid`
    /// falls back to the environment variable `CLUSTER_ID`.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let cluster_id_env = std::env::var(CLUSTER_ID_ENV).ok();
        Self::from_yaml_with_env(text, origin, cluster_id_env.as_deref())
    }

    /// As [`CloudConfig::from_yaml`], with the value of `CLUSTER_ID` given.
    pub fn from_yaml_with_env(
        text: &str,
        origin: &str,
        cluster_id_env: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let file: ConfigFile =
            serde_path_to_error::deserialize(serde_yaml_ng::Deserializer::from_str(text))
                .map_err(|error| ConfigError::from_yaml(origin, error))?;
        let cluster_id = match file.clusterid.trim() {
            "" => cluster_id_env.unwrap_or_default().trim(),
            in_file => in_file,
        }
        .to_string();
        let config = Self {
            origin: origin.to_string(),
            file,
            cluster_id,
        };
        config.check()?;
        Ok(config)
    }

    /// `loadbalancer.enabled` (ours, default true): `false` runs the node
    /// side only, for clusters without NSX ALB.
    pub fn load_balancers_enabled(&self) -> bool {
        self.file.loadbalancer.enabled
    }

    /// Where the config came from (a path), as errors name it.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The CAPVCD cluster RDE id (or a `NO_RDE_…` id): `clusterid`, else
    /// the environment's `CLUSTER_ID`.
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    fn check(&self) -> Result<(), ConfigError> {
        let invalid =
            |key: &str, message: &str| Err(ConfigError::invalid(&self.origin, key, message));
        let file = &self.file;
        let required = [
            (
                "vcd.host",
                &file.vcd.host,
                "the VCD URL, such as https://vcd.example.com",
            ),
            ("vcd.org", &file.vcd.org, "the org of the cluster"),
            (
                "loadbalancer.network",
                &file.loadbalancer.network,
                "the org VDC network whose edge gateway hosts the load balancers",
            ),
            (
                "vAppName",
                &file.vapp_name,
                "the cluster's vApp (the vApps' name prefix when vcd.isZoneEnabledCluster is true)",
            ),
        ];
        // Without load balancers no network needs naming.
        let needed = |key: &str| key != "loadbalancer.network" || file.loadbalancer.enabled;
        for (key, value, what) in required.into_iter().filter(|(key, ..)| needed(key)) {
            if value.trim().is_empty() {
                return invalid(key, &format!("required: {what}"));
            }
        }
        if self.cluster_id.contains(char::is_whitespace) {
            return invalid(
                "clusterid",
                &format!("{:?} contains white space", self.cluster_id),
            );
        }
        let nodes = &file.nodes;
        if nodes.region.as_deref().is_some_and(|r| r.trim().is_empty()) {
            return invalid(
                "nodes.region",
                "empty; leave the key out for no region label",
            );
        }
        if nodes.nics_by_network.keys().any(|n| n.trim().is_empty()) {
            return invalid("nodes.nicsByNetwork", "a network name is empty");
        }
        if nodes.zones_file.is_some() && !file.vcd.is_zone_enabled_cluster {
            return invalid(
                "nodes.zonesFile",
                "set, but vcd.isZoneEnabledCluster is false; the zones file is read only for zone-enabled clusters",
            );
        }
        // The load balancer's own rules, upstream's "shared IP or oneArm"
        // among them, so a bad file fails here and not at the first Service.
        if self.load_balancers_enabled() {
            self.lb_config()
                .check()
                .map_err(|error| ConfigError::Invalid {
                    origin: self.origin.clone(),
                    line: None,
                    key: None,
                    message: error.to_string(),
                })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "vcd:\n  host: https://vcd.example.com\n  org: tenant1\nloadbalancer:\n  network: net1\n  enableVirtualServiceSharedIP: true\nclusterid: c1\nvAppName: cluster1\n";

    fn error(text: &str) -> String {
        CloudConfig::from_yaml_with_env(text, "f.yaml", None)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn load_balancers_can_be_turned_off_and_then_need_no_network() {
        let off = MINIMAL.replace(
            "loadbalancer:\n  network: net1\n",
            "loadbalancer:\n  enabled: false\n",
        );
        let config = CloudConfig::from_yaml_with_env(&off, "f.yaml", None).unwrap();
        assert!(!config.load_balancers_enabled());
        assert!(
            CloudConfig::from_yaml_with_env(MINIMAL, "f.yaml", None)
                .unwrap()
                .load_balancers_enabled()
        );
        let absent = MINIMAL.replace(
            "loadbalancer:\n  network: net1\n  enableVirtualServiceSharedIP: true\n",
            "",
        );
        assert!(error(&absent).contains("loadbalancer.network: required"));
    }

    #[test]
    fn a_minimal_file_parses() {
        let config = CloudConfig::from_yaml_with_env(MINIMAL, "f.yaml", None).unwrap();
        assert_eq!(config.cluster_id(), "c1");
        assert_eq!(config.origin(), "f.yaml");
        assert_eq!(config.file.vcd.host, "https://vcd.example.com");
    }

    #[test]
    fn the_cluster_id_falls_back_to_the_environment() {
        let text = MINIMAL.replace("clusterid: c1\n", "");
        let config = CloudConfig::from_yaml_with_env(&text, "f.yaml", Some("urn:x:1")).unwrap();
        assert_eq!(config.cluster_id(), "urn:x:1");
        let config = CloudConfig::from_yaml_with_env(MINIMAL, "f.yaml", Some("urn:x:1")).unwrap();
        assert_eq!(
            config.cluster_id(),
            "c1",
            "the file wins over the environment"
        );
        let empty = CloudConfig::from_yaml_with_env(&text, "f.yaml", None).unwrap();
        assert_eq!(
            empty.cluster_id(),
            "",
            "as upstream, no cluster id is allowed"
        );
        assert!(error(&MINIMAL.replace("c1", "'c 1'")).contains("\"c 1\" contains white space"));
    }

    #[test]
    fn the_zones_file_key_needs_zones_enabled() {
        let text = format!("{MINIMAL}nodes:\n  zonesFile: /z.yaml\n");
        assert!(
            error(&text).contains("nodes.zonesFile: set, but vcd.isZoneEnabledCluster is false")
        );
    }

    #[test]
    fn an_empty_region_is_refused() {
        let text = format!("{MINIMAL}nodes:\n  region: ''\n");
        assert!(error(&text).contains("nodes.region: empty"));
    }
}

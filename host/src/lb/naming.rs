//! Object names: unique per gateway (a hash of cluster id and Service uid),
//! readable (namespace and name, shortened when long), bounded in length,
//! and stable across restarts. A port is known by protocol and number, so
//! renaming a port changes nothing in VCD.

use sha2::{Digest, Sha256};

use crate::policy::model::Protocol;

/// How the names of firewall objects begin.
pub const FIREWALL_PREFIX: &str = "ingress-fw-";

/// How the names of the IP sets pools take their members from begin.
pub const NODE_GROUP_PREFIX: &str = "ingress-nodes-";

/// Longest `namespace.name` part kept in a name.
const MAX_SERVICE_PART: usize = 40;

/// The first 8 hex digits of the SHA-256 of `text`.
pub fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    hex::encode(&digest[..4])
}

/// A Service port's identity in names and plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortKey {
    pub protocol: Protocol,
    pub port: u16,
}

impl std::fmt::Display for PortKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.protocol, self.port)
    }
}

/// The names of one Service's objects.
#[derive(Debug, Clone)]
pub struct Names {
    base: String,
}

impl Names {
    pub fn new(cluster_id: &str, namespace: &str, name: &str, uid: &str) -> Self {
        let readable: String = format!("{namespace}.{name}")
            .chars()
            .take(MAX_SERVICE_PART)
            .collect();
        let unique = short_hash(&format!("{cluster_id}/{uid}"));
        Self {
            base: format!("{readable}-{unique}"),
        }
    }

    pub fn pool(&self, key: PortKey) -> String {
        format!("ingress-pool-{}-{key}", self.base)
    }

    pub fn virtual_service(&self, key: PortKey) -> String {
        format!("ingress-vs-{}-{key}", self.base)
    }

    pub fn dnat(&self, key: PortKey) -> String {
        format!("dnat-ingress-vs-{}-{key}", self.base)
    }

    /// The IP set of the Nodes serving the Service, when it has its own
    /// (`externalTrafficPolicy: Local`).
    pub fn node_group(&self) -> String {
        format!("{NODE_GROUP_PREFIX}{}", self.base)
    }

    /// The Service's gateway firewall rule.
    pub fn firewall_rule(&self) -> String {
        format!("{FIREWALL_PREFIX}{}", self.base)
    }

    /// The IP set of its source ranges.
    pub fn firewall_sources(&self) -> String {
        format!("{FIREWALL_PREFIX}src-{}", self.base)
    }

    /// The IP set of its addresses.
    pub fn firewall_destinations(&self) -> String {
        format!("{FIREWALL_PREFIX}dst-{}", self.base)
    }

    /// The port profile of its ports.
    pub fn firewall_ports(&self) -> String {
        format!("{FIREWALL_PREFIX}ports-{}", self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_namespace_and_differ_per_uid_and_cluster() {
        let key = PortKey {
            protocol: Protocol::Tcp,
            port: 443,
        };
        let a = Names::new("c1", "shop", "web", "u1").virtual_service(key);
        assert!(a.starts_with("ingress-vs-shop.web-") && a.ends_with("-tcp-443"));
        assert_ne!(
            a,
            Names::new("c1", "blog", "web", "u2").virtual_service(key)
        );
        assert_ne!(
            a,
            Names::new("c2", "shop", "web", "u1").virtual_service(key)
        );
        assert_eq!(
            a,
            Names::new("c1", "shop", "web", "u1").virtual_service(key)
        );
    }

    #[test]
    fn long_names_stay_bounded() {
        let long = "n".repeat(63);
        let key = PortKey {
            protocol: Protocol::Udp,
            port: 65535,
        };
        let name = Names::new("c", &long, &long, "u").dnat(key);
        assert!(name.len() <= 80, "{} chars", name.len());
    }
}

//! The description of every certificate the CCM uploads:
//! `vcd-ccm cluster=<cluster id> kube=<identity> secret=<namespace>/<name> sha256=<digest>`.
//! It says whose upload it is (only this cluster's are ever deleted) and of
//! which Secret and certificate, so a rotation finds the older uploads of
//! the same Secret. It is not a Service's tag: the Service sweep ignores it.

use crate::lb::ClusterIdentity;

const PREFIX: &str = "vcd-ccm";

/// Who uploaded a certificate, from which Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretTag {
    pub cluster_id: String,
    pub identity: String,
    pub namespace: String,
    pub name: String,
    /// The SHA-256 of the Secret's `tls.crt`, hex.
    pub digest: String,
}

impl SecretTag {
    pub fn format(&self) -> String {
        format!(
            "{PREFIX} cluster={} kube={} secret={}/{} sha256={}",
            self.cluster_id, self.identity, self.namespace, self.name, self.digest
        )
    }

    /// Parses a description; anything not written by [`format`](Self::format) is `None`.
    pub fn parse(description: &str) -> Option<Self> {
        let mut words = description.split(' ');
        if words.next()? != PREFIX {
            return None;
        }
        let mut value = |key: &str| {
            let (k, v) = words.next()?.split_once('=')?;
            (k == key).then(|| v.to_string())
        };
        let (cluster_id, identity, secret, digest) = (
            value("cluster")?,
            value("kube")?,
            value("secret")?,
            value("sha256")?,
        );
        let (namespace, name) = secret.split_once('/')?;
        let complete = words.next().is_none()
            && ![&identity, &digest].iter().any(|v| v.is_empty())
            && !namespace.is_empty()
            && !name.is_empty();
        complete.then(|| Self {
            cluster_id,
            identity,
            namespace: namespace.to_string(),
            name: name.to_string(),
            digest,
        })
    }

    /// Uploaded by this cluster (same `clusterid` and identity).
    pub fn is_ours(&self, cluster_id: &str, identity: &ClusterIdentity) -> bool {
        self.cluster_id == cluster_id && self.identity == identity.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_foreign_descriptions_do_not_parse() {
        let tag = SecretTag {
            cluster_id: "urn:vcloud:entity:vmware:capvcdCluster:1".into(),
            identity: "5b0c".into(),
            namespace: "shop".into(),
            name: "web-tls".into(),
            digest: "ab12".into(),
        };
        assert_eq!(SecretTag::parse(&tag.format()), Some(tag.clone()));
        let identity = ClusterIdentity::from_namespace_uid("5b0c").unwrap();
        assert!(tag.is_ours(&tag.cluster_id, &identity));
        assert!(!tag.is_ours("other", &identity));
        for text in [
            "",
            "wildcard certificate for the shop",
            "vcd-ccm cluster=c1 kube=5b0c service=shop/web uid=1",
            "vcd-ccm cluster=c1 kube=5b0c secret=shop/web-tls",
            "vcd-ccm cluster=c1 kube=5b0c secret=shop/web-tls sha256=ab extra=1",
        ] {
            assert_eq!(SecretTag::parse(text), None, "{text:?}");
        }
    }
}

//! The ownership tag every object we create carries in its description:
//! `vcd-ccm cluster=<cluster id> service=<namespace>/<name> uid=<uid>`,
//! followed by ` spec=<digest>` on objects whose desired form it records.
//! Objects are found by this tag, never by name alone.

const PREFIX: &str = "vcd-ccm";

/// Who owns an object: a Service of a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnerTag {
    pub cluster_id: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

/// A parsed description: the owner and, when recorded, the spec digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tagged {
    pub owner: OwnerTag,
    pub spec: Option<String>,
}

impl OwnerTag {
    /// The tag text; also the IP Space allocation's claim marker.
    pub fn format(&self) -> String {
        format!(
            "{PREFIX} cluster={} service={}/{} uid={}",
            self.cluster_id, self.namespace, self.name, self.uid
        )
    }

    /// The description of an object whose desired form hashes to `spec`.
    pub fn describe(&self, spec: &str) -> String {
        format!("{} spec={spec}", self.format())
    }

    /// Same cluster and same Service object (the uid decides, not the name).
    pub fn same_service(&self, other: &OwnerTag) -> bool {
        self.cluster_id == other.cluster_id && self.uid == other.uid
    }

    /// Parses a description; anything not written by [`describe`] or
    /// [`format`](Self::format) is `None`.
    pub fn parse(description: &str) -> Option<Tagged> {
        let mut words = description.split(' ');
        if words.next()? != PREFIX {
            return None;
        }
        let (mut cluster, mut service, mut uid, mut spec) = (None, None, None, None);
        for word in words {
            let (key, value) = word.split_once('=')?;
            let slot = match key {
                "cluster" => &mut cluster,
                "service" => &mut service,
                "uid" => &mut uid,
                "spec" => &mut spec,
                _ => return None,
            };
            if slot.replace(value.to_string()).is_some() || value.is_empty() {
                return None;
            }
        }
        let service: String = service?;
        let (namespace, name) = service.split_once('/')?;
        Some(Tagged {
            owner: OwnerTag {
                cluster_id: cluster?,
                namespace: namespace.to_string(),
                name: name.to_string(),
                uid: uid?,
            },
            spec,
        })
    }
}

/// The owner named by an optional description, for "who holds this" messages.
pub fn describe_holder(description: Option<&str>, name: &str) -> String {
    match description.and_then(OwnerTag::parse) {
        Some(tagged) => format!(
            "{name} (Service {}/{} of cluster {})",
            tagged.owner.namespace, tagged.owner.name, tagged.owner.cluster_id
        ),
        None => format!("{name} (not managed by vcd-ccm)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner() -> OwnerTag {
        OwnerTag {
            cluster_id: "urn:vcloud:entity:vmware:capvcdCluster:1".into(),
            namespace: "shop".into(),
            name: "web".into(),
            uid: "6f1c".into(),
        }
    }

    #[test]
    fn tags_round_trip_with_and_without_spec() {
        let tag = owner();
        let plain = OwnerTag::parse(&tag.format()).unwrap();
        assert_eq!((plain.owner, plain.spec), (tag.clone(), None));
        let described = OwnerTag::parse(&tag.describe("ab12")).unwrap();
        assert_eq!(described.spec.as_deref(), Some("ab12"));
        assert!(described.owner.same_service(&tag));
    }

    #[test]
    fn foreign_descriptions_are_not_tags() {
        for text in [
            "",
            "web frontend",
            "vcd-ccm cluster=a",
            "vcd-ccm cluster=a service=web uid=1",
            "vcd-ccm cluster=a service=ns/web uid=1 colour=red",
            "vcd-ccm cluster=a cluster=b service=ns/web uid=1",
        ] {
            assert_eq!(OwnerTag::parse(text), None, "{text:?}");
        }
    }
}

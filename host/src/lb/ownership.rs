//! The ownership tag every object we create carries in its description:
//! `vcd-ccm format=4 cluster=<cluster id> kube=<identity> service=<namespace>/<name> uid=<uid>`,
//! then ` share=<key>` when the Service has a sharing key, and
//! ` spec=<digest>` on objects whose desired form it records. An IP Space
//! claim's only desired form is whether it outlives its Service
//! (`vcd-ccm.io/retain-address`): ` spec=retain` then.
//! Objects are found by this tag, never by name alone.
//!
//! `cluster` is the configured `clusterid`; `kube` is the Kubernetes
//! cluster's own identity (the `kube-system` Namespace's uid), which a copied
//! cloud config cannot duplicate. Tags written before `kube` existed parse
//! with no identity: their Services adopt them, the sweep never deletes them.
//!
//! `format` is the tag's format version. Tags without it predate numbered
//! formats: 1 (cluster, service, uid, spec), 2 (and `kube`), 3 (and
//! `share`); they parse as before and are rewritten in [`FORMAT`] when
//! their Service is next reconciled. A tag of a newer format ([`NewerTag`])
//! was written by a later vcd-ccm: this one never updates or deletes its
//! object nor takes its address. What every later format keeps, so that
//! this holds: the prefix, then `format=<n>` as the first word.

const PREFIX: &str = "vcd-ccm";

/// The tag format this version writes.
pub const FORMAT: u32 = 4;

/// The `spec` of an IP Space claim kept when its Service is deleted.
const RETAIN: &str = "retain";

/// The Kubernetes cluster's own identity, recorded in every ownership tag:
/// the uid of its `kube-system` Namespace, which no two clusters share and
/// which lives as long as the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClusterIdentity(String);

impl ClusterIdentity {
    /// The identity given by the `kube-system` Namespace's uid; `None` for a
    /// value that cannot be a tag word (empty, or with spaces or `=`).
    pub fn from_namespace_uid(uid: &str) -> Option<Self> {
        let valid = !uid.is_empty() && !uid.contains(|c: char| c.is_whitespace() || c == '=');
        valid.then(|| Self(uid.to_string()))
    }

    /// The identity as written in tags.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Who owns an object: a Service of a cluster.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OwnerTag {
    /// The configured `clusterid` (may be empty, as upstream allows).
    pub cluster_id: String,
    /// The Kubernetes cluster's identity; `None` in tags written before it
    /// was recorded.
    pub identity: Option<String>,
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
    /// The Service's uid.
    pub uid: String,
    /// The Service's `vcd-ccm.io/sharing-key`: objects of Services with the
    /// same key (and cluster) may hold one address.
    pub share: Option<String>,
}

/// A parsed description: the owner and, when recorded, the spec digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tagged {
    pub owner: OwnerTag,
    pub spec: Option<String>,
    /// The format version; `None` for tags written before formats were
    /// numbered.
    pub format: Option<u32>,
}

impl Tagged {
    /// Whether the tag is what `desired` would write: same spec digest and
    /// same owner fields (a tag without the cluster identity is rewritten,
    /// which adopts objects written before it was recorded).
    pub fn written_as(&self, desired: Option<&str>) -> bool {
        desired.and_then(OwnerTag::parse).as_ref() == Some(self)
    }

    /// An IP Space claim kept past its Service: the address goes back to
    /// a later Service of the same namespace and name in the same cluster.
    pub fn retains(&self) -> bool {
        self.spec.as_deref() == Some(RETAIN)
    }

    /// Whether `owner`'s Service may take back this retained claim: same
    /// cluster (id and identity), namespace and name, another Service object.
    pub fn retained_for(&self, owner: &OwnerTag) -> bool {
        self.retains()
            && self.owner.cluster_id == owner.cluster_id
            && self.owner.identity.is_some()
            && self.owner.identity == owner.identity
            && self.owner.namespace == owner.namespace
            && self.owner.name == owner.name
    }

    /// Whether the tag is older than [`FORMAT`] (or lacks the cluster
    /// identity): the Service's next reconcile rewrites it.
    pub fn predates_format(&self) -> bool {
        self.format != Some(FORMAT) || self.owner.identity.is_none()
    }
}

/// A tag of a format newer than [`FORMAT`]: a later vcd-ccm wrote it, and
/// this version leaves its object alone. Only the prefix and the `format`
/// word are promised; the owner's words are read when they are there, to
/// name the object and tell whose Service it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewerTag {
    pub format: u32,
    pub cluster_id: Option<String>,
    /// `namespace/name`.
    pub service: Option<String>,
    pub uid: Option<String>,
}

impl NewerTag {
    /// The newer tag `description` is, if it is one.
    pub fn parse(description: &str) -> Option<Self> {
        let mut words = description.split(' ');
        if words.next()? != PREFIX {
            return None;
        }
        let format: u32 = words.next()?.strip_prefix("format=")?.parse().ok()?;
        if format <= FORMAT {
            return None;
        }
        let mut tag = NewerTag {
            format,
            cluster_id: None,
            service: None,
            uid: None,
        };
        for (key, value) in words.filter_map(|w| w.split_once('=')) {
            let slot = match key {
                "cluster" => &mut tag.cluster_id,
                "service" => &mut tag.service,
                "uid" => &mut tag.uid,
                _ => continue,
            };
            slot.get_or_insert_with(|| value.to_string());
        }
        Some(tag)
    }

    /// Whether the tag names `owner`'s Service (same cluster id and uid).
    pub fn names_service_of(&self, owner: &OwnerTag) -> bool {
        self.cluster_id.as_deref() == Some(owner.cluster_id.as_str())
            && self.uid.as_deref() == Some(owner.uid.as_str())
    }

    /// `Service <namespace>/<name> of cluster <id>, written by a newer
    /// vcd-ccm (tag format <n>)`, with what the tag says.
    pub fn describe(&self) -> String {
        let service = match (&self.service, &self.cluster_id) {
            (Some(service), Some(cluster)) => format!("Service {service} of cluster {cluster}, "),
            (Some(service), None) => format!("Service {service}, "),
            (None, Some(cluster)) => format!("cluster {cluster}, "),
            (None, None) => String::new(),
        };
        format!(
            "{service}written by a newer vcd-ccm (tag format {}; this one knows up to {FORMAT})",
            self.format
        )
    }
}

impl OwnerTag {
    /// The tag text; also the IP Space allocation's claim marker.
    pub fn format(&self) -> String {
        let identity = self
            .identity
            .as_deref()
            .map(|id| format!(" kube={id}"))
            .unwrap_or_default();
        let share = self
            .share
            .as_deref()
            .map(|key| format!(" share={key}"))
            .unwrap_or_default();
        format!(
            "{PREFIX} format={FORMAT} cluster={}{identity} service={}/{} uid={}{share}",
            self.cluster_id, self.namespace, self.name, self.uid
        )
    }

    /// An IP Space claim's marker: kept past the Service when `retain`.
    pub fn claim_marker(&self, retain: bool) -> String {
        match retain {
            true => self.describe(RETAIN),
            false => self.format(),
        }
    }

    /// The description of an object whose desired form hashes to `spec`.
    pub fn describe(&self, spec: &str) -> String {
        format!("{} spec={spec}", self.format())
    }

    /// `Service <namespace>/<name> of cluster <cluster id>`, for messages.
    pub fn describe_service(&self) -> String {
        format!(
            "Service {}/{} of cluster {}",
            self.namespace, self.name, self.cluster_id
        )
    }

    /// Same cluster and same Service object (the uid decides, not the name).
    pub fn same_service(&self, other: &OwnerTag) -> bool {
        self.cluster_id == other.cluster_id && self.uid == other.uid
    }

    /// Another Service of the same cluster (id and identity) with the same
    /// sharing key: the one owner besides itself that may hold its address.
    pub fn same_group(&self, other: &OwnerTag) -> bool {
        self.share.is_some()
            && self.share == other.share
            && self.identity.is_some()
            && self.identity == other.identity
            && self.cluster_id == other.cluster_id
    }

    /// Parses a description in this format or an older one; anything
    /// else, a newer format's tag included, is `None`.
    pub fn parse(description: &str) -> Option<Tagged> {
        let mut words = description.split(' ').peekable();
        if words.next()? != PREFIX {
            return None;
        }
        let format = match words.peek().and_then(|w| w.strip_prefix("format=")) {
            Some(number) => {
                let format = number.parse::<u32>().ok().filter(|f| *f <= FORMAT)?;
                words.next();
                Some(format)
            }
            None => None,
        };
        let (mut cluster, mut identity, mut service, mut uid, mut share, mut spec) =
            (None, None, None, None, None, None);
        for word in words {
            let (key, value) = word.split_once('=')?;
            let slot = match key {
                "cluster" => &mut cluster,
                "kube" => &mut identity,
                "service" => &mut service,
                "uid" => &mut uid,
                "share" => &mut share,
                "spec" => &mut spec,
                _ => return None,
            };
            // Only the cluster id may be empty: upstream accepts an empty `clusterid`.
            if slot.replace(value.to_string()).is_some() || (value.is_empty() && key != "cluster") {
                return None;
            }
        }
        let service: String = service?;
        let (namespace, name) = service.split_once('/')?;
        Some(Tagged {
            owner: OwnerTag {
                cluster_id: cluster?,
                identity,
                namespace: namespace.to_string(),
                name: name.to_string(),
                uid: uid?,
                share,
            },
            spec,
            format,
        })
    }
}

/// The owner named by an optional description, for "who holds this" messages.
pub fn describe_holder(description: Option<&str>, name: &str) -> String {
    if let Some(tagged) = description.and_then(OwnerTag::parse) {
        return format!("{name} ({})", tagged.owner.describe_service());
    }
    match description.and_then(NewerTag::parse) {
        Some(newer) => format!("{name} ({})", newer.describe()),
        None => format!("{name} (not managed by vcd-ccm)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner() -> OwnerTag {
        OwnerTag {
            cluster_id: "urn:vcloud:entity:vmware:capvcdCluster:1".into(),
            identity: Some("5b0c0a4e-8c1f-4c47-9d7a-1f0e2b3c4d5e".into()),
            namespace: "shop".into(),
            name: "web".into(),
            uid: "6f1c".into(),
            share: None,
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
    fn tags_carry_this_format_and_older_ones_parse_to_be_rewritten() {
        let tag = owner();
        assert!(tag.format().starts_with("vcd-ccm format=4 cluster="));
        let current = OwnerTag::parse(&tag.describe("ab")).unwrap();
        assert_eq!(current.format, Some(FORMAT));
        assert!(!current.predates_format());
        for older in [
            "vcd-ccm cluster=c1 service=shop/web uid=6f1c spec=ab",
            "vcd-ccm cluster=c1 kube=5b0c service=shop/web uid=6f1c spec=ab",
            "vcd-ccm cluster=c1 kube=5b0c service=shop/web uid=6f1c share=dns spec=ab",
        ] {
            let tagged = OwnerTag::parse(older).expect(older);
            assert_eq!(tagged.format, None, "{older}");
            assert!(tagged.predates_format(), "{older}");
            assert_eq!(NewerTag::parse(older), None, "{older}");
        }
    }

    #[test]
    fn a_newer_format_is_no_tag_of_ours_but_names_its_owner() {
        let text = "vcd-ccm format=99 cluster=c1 kube=5b0c service=shop/web uid=6f1c colour=red plain-word";
        assert_eq!(OwnerTag::parse(text), None);
        let newer = NewerTag::parse(text).expect("a newer tag");
        assert_eq!(newer.format, 99);
        let web = OwnerTag {
            cluster_id: "c1".into(),
            ..owner()
        };
        assert!(newer.names_service_of(&web));
        assert!(!newer.names_service_of(&owner()), "another cluster id");
        assert_eq!(
            describe_holder(Some(text), "virtual service vs1"),
            "virtual service vs1 (Service shop/web of cluster c1, written by a newer vcd-ccm (tag format 99; this one knows up to 4))"
        );
        let bare = NewerTag::parse("vcd-ccm format=5").expect("only the promised words");
        assert!(!bare.names_service_of(&web));
        assert!(
            bare.describe()
                .starts_with("written by a newer vcd-ccm (tag format 5")
        );
        for not_newer in [
            "vcd-ccm format=4 cluster=c1 service=shop/web uid=1",
            "vcd-ccm format=x cluster=c1 service=shop/web uid=1",
            "vcd-ccm cluster=c1 format=99 service=shop/web uid=1",
            "other format=99",
        ] {
            assert_eq!(NewerTag::parse(not_newer), None, "{not_newer}");
        }
    }

    #[test]
    fn tags_without_identity_and_with_an_empty_cluster_id_parse() {
        let legacy = OwnerTag::parse("vcd-ccm cluster=c1 service=shop/web uid=6f1c spec=ab")
            .expect("a tag written before the identity");
        assert_eq!(legacy.owner.identity, None);
        assert!(legacy.owner.same_service(&OwnerTag {
            cluster_id: "c1".into(),
            ..owner()
        }));
        let unnamed = OwnerTag {
            cluster_id: String::new(),
            ..owner()
        };
        let parsed = OwnerTag::parse(&unnamed.format()).expect("an empty cluster id");
        assert_eq!(parsed.owner, unnamed);
    }

    #[test]
    fn sharing_keys_round_trip_and_group_only_one_cluster() {
        let shared = OwnerTag {
            share: Some("dns".into()),
            ..owner()
        };
        let parsed = OwnerTag::parse(&shared.describe("ab")).expect("a shared tag");
        assert_eq!(parsed.owner, shared);
        let sibling = OwnerTag {
            name: "dns-udp".into(),
            uid: "7a2d".into(),
            ..shared.clone()
        };
        assert!(shared.same_group(&sibling));
        assert!(!shared.same_group(&owner()), "no key, no group");
        let elsewhere = OwnerTag {
            identity: Some("another-cluster".into()),
            ..sibling.clone()
        };
        assert!(!shared.same_group(&elsewhere));
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
            "vcd-ccm cluster=a kube= service=ns/web uid=1",
            "vcd-ccm cluster=a service=ns/web uid=1 share=",
            "vcd-ccm format=99 cluster=a service=ns/web uid=1",
            "vcd-ccm format= cluster=a service=ns/web uid=1",
            "vcd-ccm cluster=a format=4 service=ns/web uid=1",
        ] {
            assert_eq!(OwnerTag::parse(text), None, "{text:?}");
        }
    }
}

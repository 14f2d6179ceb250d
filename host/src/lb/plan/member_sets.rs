//! The member sets a Service's pools want: listed members (before API
//! 37.1), the cluster's IP set, a selector's, or the Service's own, each
//! with the name and tag it is written under. `member_groups.rs` finds and
//! writes them.

use crate::lb::naming::{NODE_GROUP_PREFIX, short_hash};
use crate::lb::ownership::{FORMAT, OwnerTag};
use crate::lb::service::NodeSpec;

/// `EdgeLoadBalancerPool.members` holds at most this many (`maxItems`).
pub const MAX_LISTED_MEMBERS: usize = 100;

/// Where a Service's pools take their members from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Members {
    /// Listed in each pool (before API 37.1).
    Listed,
    /// The IP set `want` describes.
    Group(GroupWant),
}

/// An IP set as a Service's pools need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupWant {
    pub name: String,
    /// Its ownership tag with the digest of its addresses.
    pub description: String,
    /// The Nodes' addresses, sorted and without repeats.
    pub addresses: Vec<String>,
    /// Whether the set is the Service's own (else the cluster's).
    pub own: bool,
    /// A selector set's mark, which its pools carry in their tag.
    pub mark: Option<String>,
    /// The set as it is serves: no Node meets the selector, and the pools
    /// keep the members they have (a missing set is created empty).
    pub keep: bool,
}

impl GroupWant {
    /// Whether `description` is this set's tag, whatever its digest.
    pub fn tags(&self, description: &str) -> bool {
        let tag = |d: &'_ str| d.split(" spec=").next().map(str::to_string);
        tag(description) == tag(&self.description)
    }
}

/// The Nodes' internal addresses, sorted, each once.
pub fn node_addresses(nodes: &[NodeSpec]) -> Vec<String> {
    let mut ips: Vec<String> = nodes
        .iter()
        .filter_map(|n| n.internal_ip.clone())
        .filter(|ip| !ip.is_empty())
        .collect();
    ips.sort_unstable();
    ips.dedup();
    ips
}

/// The cluster's set: its name and its tag (without the digest).
#[derive(Debug)]
pub struct ClusterGroup {
    pub name: String,
    tag: String,
    /// The cluster id and identity, which selector sets are named after too.
    owner: String,
}

/// The name of every selector set starts with this.
pub const SELECTOR_SET_PREFIX: &str = "select-";

impl ClusterGroup {
    /// Named after cluster id and identity, so two clusters sharing a
    /// gateway (even with one `clusterid`) never share a set.
    pub fn new(cluster_id: &str, identity: &str) -> Self {
        Self {
            name: format!(
                "{NODE_GROUP_PREFIX}cluster-{}",
                short_hash(&format!("{cluster_id}/{identity}"))
            ),
            tag: format!("vcd-ccm format={FORMAT} cluster={cluster_id} kube={identity} nodes=all"),
            owner: format!("{cluster_id}/{identity}"),
        }
    }

    /// The set holding `addresses`.
    pub fn want(&self, addresses: Vec<String>) -> GroupWant {
        GroupWant {
            name: self.name.clone(),
            description: format!("{} spec={}", self.tag, short_hash(&addresses.join(","))),
            addresses,
            own: false,
            mark: None,
            keep: false,
        }
    }

    /// The set of the Nodes that meet `selector` (in its canonical text),
    /// holding `addresses`; `keep` leaves an existing set as it is.
    pub fn selecting(&self, selector: &str, addresses: Vec<String>, keep: bool) -> GroupWant {
        let mark = short_hash(&format!("{}/{selector}", self.owner));
        self.selector_set(mark, addresses, keep)
    }

    /// The selector set marked `mark`, holding `addresses`.
    pub fn selector_set(&self, mark: String, addresses: Vec<String>, keep: bool) -> GroupWant {
        let tag = self.tag.replace(" nodes=all", &format!(" nodes={mark}"));
        GroupWant {
            name: format!("{NODE_GROUP_PREFIX}{SELECTOR_SET_PREFIX}{mark}"),
            description: format!("{tag} spec={}", short_hash(&addresses.join(","))),
            addresses,
            own: false,
            mark: Some(mark),
            keep,
        }
    }

    /// The mark of a selector set of this cluster, from its tag.
    pub fn selector_mark(&self, description: &str) -> Option<String> {
        let tag = description.split(" spec=").next()?;
        let (prefix, mark) = tag.rsplit_once(" nodes=")?;
        let ours = self.tag.strip_suffix(" nodes=all") == Some(prefix);
        (ours && mark != "all").then(|| mark.to_string())
    }
}

/// The Service's own set holding `addresses`.
pub fn own_want(name: String, owner: &OwnerTag, addresses: Vec<String>) -> GroupWant {
    GroupWant {
        name,
        description: owner.describe(&short_hash(&addresses.join(","))),
        addresses,
        own: true,
        mark: None,
        keep: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::ownership::NewerTag;

    #[test]
    fn the_clusters_set_is_named_and_tagged_per_cluster_and_identity() {
        let ours = ClusterGroup::new("c1", "kube-a");
        let copied_config = ClusterGroup::new("c1", "kube-b");
        assert_ne!(ours.name, copied_config.name);
        assert!(ours.name.starts_with("ingress-nodes-cluster-"));
        let want = ours.want(vec!["10.0.0.1".into(), "10.0.0.2".into()]);
        let theirs = copied_config.want(Vec::new());
        assert!(!theirs.tags(&want.description));
        assert!(!want.tags("made by hand"));
        // The digest follows the entries; the tag stays.
        let grown = ours.want(vec![
            "10.0.0.1".into(),
            "10.0.0.2".into(),
            "10.0.0.3".into(),
        ]);
        assert_ne!(grown.description, want.description);
        assert!(want.tags(&grown.description));
        // A selector's set is named and tagged apart, and its mark read back.
        let gold = ours.selecting("role in (ingress)", vec!["10.0.0.1".into()], false);
        assert!(gold.name.starts_with("ingress-nodes-select-"));
        assert!(!gold.tags(&want.description) && !want.tags(&gold.description));
        assert_eq!(ours.selector_mark(&gold.description), gold.mark);
        assert_eq!(copied_config.selector_mark(&gold.description), None);
        assert_eq!(ours.selector_mark(&want.description), None);
        let other = ours.selecting("role in (edge)", Vec::new(), false);
        assert_ne!(other.name, gold.name);
        // Neither a Service's tag nor a newer format's.
        assert!(OwnerTag::parse(&want.description).is_none());
        assert!(NewerTag::parse(&want.description).is_none());
    }

    #[test]
    fn node_addresses_are_sorted_once_each_without_blanks() {
        let nodes = [
            NodeSpec::new("b", "10.0.0.2"),
            NodeSpec::new("a", "10.0.0.1"),
            NodeSpec::new("a-again", "10.0.0.1"),
            NodeSpec::new("blank", ""),
        ];
        assert_eq!(node_addresses(&nodes), vec!["10.0.0.1", "10.0.0.2"]);
    }
}

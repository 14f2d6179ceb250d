//! Pool members as IP sets. From API 37.1 a pool may take its members from
//! an edge firewall group (`memberGroupRef`, with `defaultPort` as the
//! destination port) instead of listing them, which lifts the spec's
//! 100-member cap and turns a node join into one write: every pool of a
//! Service served by all eligible Nodes points at one IP set of the
//! cluster, and a `Local` Service (only the Nodes with a ready endpoint)
//! at an IP set of its own. Before 37.1 pools list their members, at most
//! 100.
//!
//! The sets are tagged like every other object: the cluster's with the
//! cluster id and identity, a Service's with its owner tag. Services whose
//! decision names a node selector share a set per selector, tagged like
//! the cluster's with `nodes=<mark>`; their pools carry the mark in their
//! tag, so the set is known unused (and deleted) once no pool tag carries
//! it. One IP set
//! listing is kept for [`GATEWAY_REFRESH`] (or until a drift check or a
//! failed write drops it), so a reconcile whose set is already right makes
//! no call at all.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use crate::lb::errors::LbError;
use crate::lb::naming::{NODE_GROUP_PREFIX, short_hash};
use crate::lb::newer_format::NewerObject;
use crate::lb::observe::snapshot::GATEWAY_REFRESH;
use crate::lb::ownership::{FORMAT, NewerTag, OwnerTag, describe_holder};
use crate::lb::plan::op::Op;
use crate::lb::service::NodeSpec;
use crate::vcd::resources::EntityRef;
use crate::vcd::resources::ip_set::IpSet;
use crate::vcd::{VcdClient, VcdError};

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
    fn tags(&self, description: &str) -> bool {
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

#[derive(Debug, Default)]
pub struct Known {
    listed_at: Option<Instant>,
    /// The gateway's IP sets by name: summaries, or whole once read.
    sets: BTreeMap<String, (IpSet, bool)>,
}

impl Known {
    /// The set named `name`, when read whole.
    pub fn whole(&self, name: &str) -> Option<&IpSet> {
        self.sets
            .get(name)
            .filter(|(_, whole)| *whole)
            .map(|(set, _)| set)
    }

    /// Records a set as written.
    pub fn wrote(&mut self, set: IpSet) {
        self.sets.insert(set.name.clone(), (set, true));
    }

    /// Records a set as deleted.
    pub fn removed(&mut self, name: &str) {
        self.sets.remove(name);
    }

    /// Forgets everything: a failed write means VCD knows something this
    /// process does not.
    pub fn forget(&mut self) {
        *self = Known::default();
    }
}

/// The member groups of one gateway, as last listed and written.
#[derive(Debug)]
pub struct MemberGroups {
    /// The set of every Node serving the cluster's Services.
    cluster: ClusterGroup,
    known: tokio::sync::Mutex<Known>,
    /// Why VCD refused to write an IP set (the role lacks the right):
    /// pools then keep member lists until a restart.
    refused: std::sync::Mutex<Option<String>>,
}

impl MemberGroups {
    pub fn new(cluster: ClusterGroup) -> Self {
        Self {
            cluster,
            known: tokio::sync::Mutex::default(),
            refused: std::sync::Mutex::default(),
        }
    }

    /// The cluster's set.
    pub fn cluster(&self) -> &ClusterGroup {
        &self.cluster
    }

    /// Forgets what was read: the next use lists the sets again.
    pub async fn invalidate(&self) {
        *self.known.lock().await = Known::default();
    }

    async fn listed<'a>(
        known: &'a mut Known,
        client: &VcdClient,
        gateway_id: &str,
        fresh: bool,
    ) -> Result<&'a mut BTreeMap<String, (IpSet, bool)>, VcdError> {
        let stale = known
            .listed_at
            .is_none_or(|at| fresh || at.elapsed() > GATEWAY_REFRESH);
        if stale {
            let summaries = client.ip_set_summaries(gateway_id).await?;
            known.sets = summaries
                .into_iter()
                .map(|s| (s.name.clone(), (s, false)))
                .collect();
            known.listed_at = Some(Instant::now());
        }
        Ok(&mut known.sets)
    }

    /// The kept listing (read again when stale), a failure named for
    /// `service`.
    async fn listed_for<'a>(
        known: &'a mut Known,
        client: &VcdClient,
        gateway_id: &str,
        service: &str,
    ) -> Result<&'a mut BTreeMap<String, (IpSet, bool)>, LbError> {
        Self::listed(known, client, gateway_id, false)
            .await
            .map_err(LbError::vcd(
                service,
                "listing the gateway's IP sets".into(),
            ))
    }

    /// The write that makes the set hold what `want` says (a create when
    /// it is missing), if any, and the reference the pools name: without an
    /// id for a set still to be created. A set of that name owned by anyone
    /// else is left alone.
    pub async fn plan_set(
        &self,
        client: &VcdClient,
        gateway: &EntityRef,
        want: &GroupWant,
        owner: &OwnerTag,
        service: &str,
    ) -> Result<(EntityRef, Option<Op>), LbError> {
        self.guarded(async |known| {
            self.plan_in(known, client, gateway, want, owner, service)
                .await
        })
        .await
    }

    /// Runs `step` on what is known, alone; a failed step drops it, as VCD
    /// then knows something this process does not.
    async fn guarded<T>(
        &self,
        step: impl AsyncFnOnce(&mut Known) -> Result<T, LbError>,
    ) -> Result<T, LbError> {
        let mut known = self.known.lock().await;
        let result = step(&mut known).await;
        if result.is_err() {
            *known = Known::default();
        }
        result
    }

    /// Why pools keep member lists though VCD offers groups, if they do.
    pub fn refused(&self) -> Option<String> {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Notes a write of an IP set VCD refused for want of a right.
    pub fn note_refusal(&self, error: &VcdError, name: &str) {
        if let VcdError::Forbidden { message, .. } = error {
            let reason = format!(
                "VCD refused to write IP set {name} ({}): the role lacks \"Organization vDC Gateway: Configure Firewall\"",
                crate::text::sanitize(message, 200)
            );
            tracing::warn!(%reason, "pools keep listing their members (at most 100) until vcd-ccm restarts with the right granted");
            *self.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
        }
    }

    async fn plan_in(
        &self,
        known: &mut Known,
        client: &VcdClient,
        gateway: &EntityRef,
        want: &GroupWant,
        owner: &OwnerTag,
        service: &str,
    ) -> Result<(EntityRef, Option<Op>), LbError> {
        let vcd = |action: String| LbError::vcd(service, action);
        let sets = Self::listed_for(known, client, &gateway.id, service).await?;
        let current = match sets.get(&want.name) {
            None => None,
            Some((set, true)) => Some(set.clone()),
            Some((summary, false)) => {
                let id = summary.id.clone().unwrap_or_default();
                let mut set = client
                    .get_ip_set(&id)
                    .await
                    .map_err(vcd(format!("reading IP set {}", want.name)))?;
                // Kept sorted, as wanted sets are, so comparing is cheap.
                set.ip_addresses.sort_unstable();
                sets.insert(want.name.clone(), (set.clone(), true));
                Some(set)
            }
        };
        let Some(set) = current else {
            let new = IpSet::new(
                &want.name,
                &want.description,
                gateway,
                want.addresses.clone(),
            );
            return Ok((new.reference(), Some(Op::WriteIpSet(new))));
        };
        let description = set.description.as_deref().unwrap_or_default();
        if let Some(newer) = NewerTag::parse(description) {
            return Err(LbError::NewerFormat {
                service: service.to_string(),
                objects: NewerObject::of("ip_set", &set.name, Some(description))
                    .map(|o| o.describe())
                    .unwrap_or_else(|| format!("IP set {}", set.name)),
                format: newer.format,
                known: FORMAT,
            });
        }
        let ours = match want.own {
            true => OwnerTag::parse(description).is_some_and(|t| t.owner.same_service(owner)),
            false => want.tags(description),
        };
        if !ours {
            return Err(LbError::ForeignObject {
                service: service.to_string(),
                what: "IP set",
                name: set.name.clone(),
                owner: describe_holder(set.description.as_deref(), &set.name),
            });
        }
        let right = description == want.description && set.ip_addresses == want.addresses;
        if right || want.keep {
            return Ok((set.reference(), None));
        }
        let changed = IpSet {
            description: Some(want.description.clone()),
            ip_addresses: want.addresses.clone(),
            ..set
        };
        Ok((changed.reference(), Some(Op::WriteIpSet(changed))))
    }

    /// The delete of the set `name` if it is `owner`'s Service's. Its
    /// pools must not use it any more when it runs.
    pub async fn plan_removal(
        &self,
        client: &VcdClient,
        gateway_id: &str,
        name: &str,
        owner: &OwnerTag,
        service: &str,
    ) -> Result<Option<Op>, LbError> {
        self.guarded(async |known| {
            let sets = Self::listed_for(known, client, gateway_id, service).await?;
            let Some((set, _)) = sets.get(name) else {
                return Ok(None);
            };
            let tagged = set.description.as_deref().and_then(OwnerTag::parse);
            if !tagged.is_some_and(|t| t.owner.same_service(owner)) {
                return Ok(None);
            }
            Ok(Some(Op::DeleteIpSet {
                id: set.id.clone().unwrap_or_default(),
                name: name.to_string(),
            }))
        })
        .await
    }

    /// The deletes of this cluster's selector sets whose mark no pool tag
    /// carries (`used`): the Services that shared them moved off or are
    /// gone. `within` limits them to those marks (a reconcile deletes only
    /// what its Service left, never a set another one has just created).
    pub async fn unused_selector_sets(
        &self,
        client: &VcdClient,
        gateway_id: &str,
        used: &BTreeSet<String>,
        within: Option<&BTreeSet<String>>,
        service: &str,
    ) -> Result<Vec<Op>, LbError> {
        self.guarded(async |known| {
            let sets = Self::listed_for(known, client, gateway_id, service).await?;
            Ok(sets
                .values()
                .filter_map(|(set, _)| {
                    let mark = self.cluster.selector_mark(set.description.as_deref()?)?;
                    let candidate = within.is_none_or(|marks| marks.contains(&mark));
                    (candidate && !used.contains(&mark)).then(|| Op::DeleteIpSet {
                        id: set.id.clone().unwrap_or_default(),
                        name: set.name.clone(),
                    })
                })
                .collect())
        })
        .await
    }

    /// The sets as known, held alone while the applier writes one: it
    /// looks again at what another reconcile may have written since this
    /// one planned, and records what it wrote.
    pub async fn writing(&self) -> tokio::sync::MutexGuard<'_, Known> {
        self.known.lock().await
    }

    /// The Services' sets on the gateway (the cluster's left out), listed
    /// anew: name and description, for the sweep.
    pub async fn service_sets(
        &self,
        client: &VcdClient,
        gateway_id: &str,
    ) -> Result<Vec<(String, String)>, VcdError> {
        let mut known = self.known.lock().await;
        let sets = Self::listed(&mut known, client, gateway_id, true).await?;
        Ok(sets
            .values()
            .filter(|(s, _)| s.name.starts_with(NODE_GROUP_PREFIX) && s.name != self.cluster.name)
            .map(|(s, _)| (s.name.clone(), s.description.clone().unwrap_or_default()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

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
use crate::lb::naming::NODE_GROUP_PREFIX;
use crate::lb::newer_format::NewerObject;
use crate::lb::observe::snapshot::GATEWAY_REFRESH;
use crate::lb::ownership::{FORMAT, NewerTag, OwnerTag, describe_holder};
use crate::lb::plan::member_sets::{ClusterGroup, GroupWant};
use crate::lb::plan::op::Op;
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::ip_set::IpSet;
use crate::vcd::{VcdClient, VcdError};

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
            let summaries = client.ip_sets().summaries(gateway_id).await?;
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
                    .ip_sets()
                    .get(&id)
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

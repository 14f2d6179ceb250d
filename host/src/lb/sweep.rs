//! Sweep: delete what carries this cluster's tag but belongs to a Service
//! that no longer exists (crashes, type changes while the CCM was down,
//! Services deleted behind its back), IP Space claims included, and this
//! cluster's certificate uploads that no virtual service uses.
//!
//! Only objects tagged with both this `clusterid` and this Kubernetes
//! cluster's identity are ever deleted. Tagged objects that share one of the
//! two but not the other are reported, never touched: another cluster
//! configured with the same `clusterid`, this cluster under a former
//! `clusterid`, or objects written before identities were recorded.

use crate::lb::plan::objects::selector_marks_in_use;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::lb::apply::applier::Applier;
use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::naming::Names;
use crate::lb::newer_format::{self, NewerObject};
use crate::lb::operations::firewall_ops;
use crate::lb::ownership::OwnerTag;
use crate::lb::plan;
use crate::lb::plan::certificate_prunes as prune;
use crate::lb::plan::claims::hand_off;
use crate::lb::plan::firewall;
use crate::lb::plan::op::{AddressOp, Op};
use crate::lb::planning;

/// What a sweep removed, and what it found and left alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// `namespace/name (uid)` of each Service whose leftovers were removed.
    pub services: Vec<String>,
    /// Virtual services, pools, NAT rules, firewall objects and health
    /// monitors deleted.
    pub objects: usize,
    /// IP Space allocations released.
    pub released: usize,
    /// IP Space allocations kept for deleted Services
    /// (`vcd-ccm.io/retain-address`): never released by a sweep.
    pub retained: usize,
    /// Certificate uploads of this cluster no virtual service used, deleted.
    pub certificates: usize,
    /// Identities of other Kubernetes clusters whose objects carry this
    /// `clusterid`: a copied cloud config. Their objects are left alone.
    pub other_clusters: BTreeSet<String>,
    /// Former `clusterid`s under which this cluster's objects still exist.
    pub former_cluster_ids: BTreeSet<String>,
    /// Objects and claims with this `clusterid`, no identity (written before
    /// identities were recorded) and no live Service: they cannot be told
    /// from another cluster's, so they are left alone.
    pub unattributed: usize,
    /// Objects and claims whose tag is of a newer format than this version
    /// knows (a later vcd-ccm wrote them), by kind (those found): left
    /// alone whoever they belong to.
    pub newer_format: BTreeMap<&'static str, usize>,
}

/// What the sweep does with one tagged object.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Ours and its Service is gone: delete.
    Stale,
    /// Ours and live, or another cluster id and identity entirely.
    Keep,
    /// Our cluster id, another cluster's identity.
    OtherCluster(String),
    /// Our identity, another cluster id.
    FormerClusterId(String),
    /// Our cluster id, no identity, no live Service.
    Unattributed,
}

/// Fills the caches every first Service would otherwise pay for (the
/// certificate library, the engine groups); a failure here is only a
/// cost moved to that Service.
async fn warm_caches(ctx: &Context) {
    if let Err(error) = ctx.catalog.certificates(&ctx.client, false).await {
        tracing::debug!(%error, "the certificate library is read at the first decision instead");
    }
    if let Err(error) = ctx
        .catalog
        .engine_groups(&ctx.client, &ctx.gateway.id)
        .await
    {
        tracing::debug!(%error, "the engine groups are read at the first decision instead");
    }
}

/// Deletes every object tagged with this cluster whose Service uid is
/// not in `live_uids`. Objects of other clusters and untagged objects
/// are never touched.
pub(in crate::lb) async fn sweep(
    ctx: &Context,
    live_uids: &HashSet<String>,
) -> Result<SweepReport, LbError> {
    let vcd = |a: String| LbError::vcd("(sweep)", a);
    warm_caches(ctx).await;
    let view = ctx
        .snapshot
        .refreshed(&ctx.client, &ctx.gateway.id)
        .await
        .map_err(vcd("reading the gateway's load balancer objects".into()))?;
    let descriptions = view.descriptions();
    let mut report = SweepReport::default();
    // A later vcd-ccm's objects parse as no tag below: never deleted.
    let mut newer = view.newer_objects();
    let mut stale = BTreeMap::new();
    let mut firewall_stale = BTreeMap::new();
    if ctx.config.manage_firewall {
        for (kind, name, description) in firewall::firewall_descriptions(ctx).await? {
            newer.extend(NewerObject::of(kind, &name, Some(&description)));
            let Some(tagged) = OwnerTag::parse(&description) else {
                continue;
            };
            match verdict(ctx, &tagged.owner, live_uids) {
                Verdict::Stale => {
                    firewall_stale.insert(tagged.owner.uid.clone(), tagged.owner);
                }
                other => report.note(other),
            }
        }
    }
    for owner in firewall_stale.values() {
        let names = Names::new(&owner.cluster_id, &owner.namespace, &owner.name, &owner.uid);
        let removal = firewall::plan_firewall_removal(ctx, owner, &names).await?;
        let key = format!("{}/{}", owner.namespace, owner.name);
        report.objects += Applier::new(ctx, &key)
            .apply(firewall_ops(removal), &Default::default())
            .await?;
    }
    for owner in descriptions.filter_map(|d| Some(OwnerTag::parse(d?)?.owner)) {
        match verdict(ctx, &owner, live_uids) {
            Verdict::Stale => {
                stale.insert(owner.uid.clone(), owner);
            }
            other => report.note(other),
        }
    }
    for owner in stale.values() {
        let observed = view.owned_by(owner);
        let ops = plan::teardown(&observed);
        report.objects += ops.len();
        Applier::new(ctx, &owner.name).apply(ops, &observed).await?;
        report.services.push(format!(
            "{}/{} ({})",
            owner.namespace, owner.name, owner.uid
        ));
    }
    // Their IP sets, now that no pool uses them (and those a delete
    // cut short left behind).
    let sets = ctx
        .member_groups
        .service_sets(&ctx.client, &ctx.gateway.id)
        .await
        .map_err(vcd("listing the gateway's IP sets".into()))?;
    for (name, description) in sets {
        newer.extend(NewerObject::of("ip_set", &name, Some(&description)));
        let Some(tagged) = OwnerTag::parse(&description) else {
            continue;
        };
        match verdict(ctx, &tagged.owner, live_uids) {
            Verdict::Stale => {
                let removal = ctx
                    .member_groups
                    .plan_removal(
                        &ctx.client,
                        &ctx.gateway.id,
                        &name,
                        &tagged.owner,
                        "(sweep)",
                    )
                    .await?;
                report.objects += Applier::new(ctx, "(sweep)")
                    .apply(removal.into_iter().collect(), &Default::default())
                    .await?;
            }
            other => report.note(other),
        }
    }
    // The cluster's health monitors no pool uses: a deleted Service's, or
    // one a crash left before its first assignment.
    let unused = planning::monitor_deletes(ctx, "(sweep)", &[], true).await?;
    report.objects += Applier::new(ctx, "(sweep)")
        .apply(unused, &Default::default())
        .await?;
    for owner in firewall_stale.values() {
        if !stale.contains_key(&owner.uid) {
            report.services.push(format!(
                "{}/{} ({})",
                owner.namespace, owner.name, owner.uid
            ));
        }
    }
    // The view after the deletes above: who still holds an address, and
    // what still uses a certificate.
    let view = ctx.gateway_view("(sweep)").await?;
    for space in ctx.source.spaces() {
        let allocations = ctx
            .client
            .ip_spaces()
            .claimed_allocations(&space.id)
            .await
            .map_err(vcd(format!("reading IP Space {} allocations", space.name)))?;
        for allocation in allocations {
            let description = allocation.description.as_deref();
            newer.extend(NewerObject::of(
                "ip_space_allocation",
                &allocation.value,
                description,
            ));
            let Some(tagged) = description.and_then(OwnerTag::parse) else {
                continue;
            };
            match verdict(ctx, &tagged.owner, live_uids) {
                Verdict::Stale if tagged.retains() => report.retained += 1,
                Verdict::Stale => {
                    let op = hand_off(
                        &view,
                        space.id.clone(),
                        allocation,
                        &tagged.owner,
                        Some(live_uids),
                    );
                    report.released += usize::from(matches!(op, AddressOp::Release { .. }));
                    Applier::new(ctx, "(sweep)")
                        .apply(vec![Op::Address(op)], &Default::default())
                        .await?;
                }
                other => report.note(other),
            }
        }
    }
    // Selector sets no pool uses (a Service moved off or went while down).
    let used = selector_marks_in_use(view.pools.iter().map(|p| p.description.as_deref()));
    let unused = ctx
        .member_groups
        .unused_selector_sets(&ctx.client, &ctx.gateway.id, &used, None, "(sweep)")
        .await?;
    report.objects += Applier::new(ctx, "(sweep)")
        .apply(unused, &Default::default())
        .await?;
    let prunes = prune::plan_sweep_uploads(ctx, &view)
        .await
        .map_err(vcd("reading the certificate library".into()))?;
    report.certificates = Applier::new(ctx, "(sweep)")
        .apply(prunes, &Default::default())
        .await?;
    newer.iter().for_each(|o| ctx.newer_formats.notice(o));
    report.newer_format = newer_format::count_by_kind(&newer);
    Ok(report)
}

/// Whether the sweep deletes `owner`'s objects.
pub(super) fn is_stale(ctx: &Context, owner: &OwnerTag, live_uids: &HashSet<String>) -> bool {
    verdict(ctx, owner, live_uids) == Verdict::Stale
}

fn verdict(ctx: &Context, owner: &OwnerTag, live_uids: &HashSet<String>) -> Verdict {
    let ours = ctx.identity.as_str();
    let same_id = owner.cluster_id == ctx.config.cluster_id;
    match owner.identity.as_deref() {
        Some(identity) if identity == ours && !same_id => {
            Verdict::FormerClusterId(owner.cluster_id.clone())
        }
        _ if !same_id || live_uids.contains(&owner.uid) => Verdict::Keep,
        Some(identity) if identity == ours => Verdict::Stale,
        Some(identity) => Verdict::OtherCluster(identity.to_string()),
        None => Verdict::Unattributed,
    }
}

impl SweepReport {
    /// Every kind of object a tag is found on, with how many of a newer
    /// format the sweep found (0 included).
    pub fn newer_format_by_kind(&self) -> impl Iterator<Item = (&'static str, usize)> + '_ {
        newer_format::KINDS
            .iter()
            .map(|kind| (*kind, self.newer_format.get(kind).copied().unwrap_or(0)))
    }

    fn note(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Stale | Verdict::Keep => {}
            Verdict::OtherCluster(identity) => {
                self.other_clusters.insert(identity);
            }
            Verdict::FormerClusterId(id) => {
                self.former_cluster_ids.insert(id);
            }
            Verdict::Unattributed => self.unattributed += 1,
        }
    }
}

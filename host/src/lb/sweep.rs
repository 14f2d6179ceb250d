//! Sweep: delete what carries this cluster's tag but belongs to a Service
//! that no longer exists (crashes, type changes while the CCM was down,
//! Services deleted behind its back), IP Space claims included.

use std::collections::{BTreeMap, HashSet};

use super::observe::GatewayView;
use super::ownership::OwnerTag;
use super::plan;
use super::{LbError, LoadBalancers};
use crate::vcd::fiql::Filter;

/// What a sweep removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// `namespace/name (uid)` of each Service whose leftovers were removed.
    pub services: Vec<String>,
    /// Virtual services, pools and NAT rules deleted.
    pub objects: usize,
    /// IP Space allocations released.
    pub released: usize,
}

impl LoadBalancers {
    /// Deletes every object tagged with this cluster whose Service uid is
    /// not in `live_uids`. Objects of other clusters and untagged objects
    /// are never touched.
    pub async fn sweep(&self, live_uids: &HashSet<String>) -> Result<SweepReport, LbError> {
        let vcd = |a: String| LbError::vcd("(sweep)", a);
        let view = GatewayView::read(&self.client, &self.gateway.id, true)
            .await
            .map_err(vcd("reading the gateway's load balancer objects".into()))?;
        let descriptions = view
            .virtual_services
            .iter()
            .map(|v| v.description.as_deref())
            .chain(view.pools.iter().map(|p| p.description.as_deref()))
            .chain(view.nat_rules.iter().map(|r| r.description.as_deref()));
        let stale: BTreeMap<String, OwnerTag> = descriptions
            .filter_map(|d| d.and_then(OwnerTag::parse))
            .map(|tagged| tagged.owner)
            .filter(|owner| self.is_stale(owner, live_uids))
            .map(|owner| (owner.uid.clone(), owner))
            .collect();
        let mut report = SweepReport::default();
        for owner in stale.values() {
            let observed = view.owned_by(owner);
            let ops = plan::teardown(&observed);
            report.objects += ops.len();
            let applier = super::apply::Applier {
                client: &self.client,
                catalog: &self.catalog,
                gateway_id: &self.gateway.id,
                service: &owner.name,
            };
            applier.apply(ops, &observed).await?;
            report.services.push(format!(
                "{}/{} ({})",
                owner.namespace, owner.name, owner.uid
            ));
        }
        let claimed =
            Filter::eq("usageState", "USED_MANUAL").and(Filter::eq("type", "FLOATING_IP"));
        for space in self.source.spaces() {
            let allocations = self
                .client
                .ip_allocations(&space.id, Some(&claimed))
                .await
                .map_err(vcd(format!("reading IP Space {} allocations", space.name)))?;
            for allocation in allocations {
                let owner = allocation.description.as_deref().and_then(OwnerTag::parse);
                if owner.is_some_and(|t| self.is_stale(&t.owner, live_uids)) {
                    self.client
                        .release_allocation(&space.id, &allocation)
                        .await
                        .map_err(vcd(format!(
                            "releasing IP Space allocation {}",
                            allocation.value
                        )))?;
                    report.released += 1;
                }
            }
        }
        if report != SweepReport::default() {
            tracing::info!(?report, "swept load-balancer objects of deleted Services");
        }
        Ok(report)
    }

    fn is_stale(&self, owner: &OwnerTag, live_uids: &HashSet<String>) -> bool {
        owner.cluster_id == self.config.cluster_id && !live_uids.contains(&owner.uid)
    }
}

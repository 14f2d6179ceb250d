//! The public operations `get`, `ensure` and `update` (`delete` is in
//! `delete.rs`), and what every operation starts from: the gateway as
//! observed and the applier of writes.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::lb::LoadBalancers;
use crate::lb::apply::applier::Applier;
use crate::lb::apply::rde::RdeRecord;
use crate::lb::errors::LbError;
use crate::lb::newer_format::NewerObject;
use crate::lb::observe::objects::{GatewayView, ServiceObjects};
use crate::lb::ownership::FORMAT;
use crate::lb::plan::firewall::Exposure;
use crate::lb::plan::op::{FirewallOp, Op};
use crate::lb::reconcile::Converged;
use crate::lb::service::{LbStatus, NodeSpec, ServiceSpec};
use crate::lb::source_ranges::SourceRange;
use crate::lb::vips::Vips;

impl LoadBalancers {
    /// The Service's load balancer as VCD holds it: `None` when it owns no
    /// object on the gateway.
    pub async fn get(&self, service: &ServiceSpec) -> Result<Option<LbStatus>, LbError> {
        service.check()?;
        let observed = self.observe(service).await?.1;
        if observed.is_empty() {
            return Ok(None);
        }
        let vips = self
            .external_ips(&observed)
            .into_iter()
            .rev()
            .collect::<Vips>();
        Ok(Some(LbStatus::at(&vips.ordered(service.first_family()))))
    }

    /// Creates or converges the Service's load balancer; returns the
    /// ingress to write to `status.loadBalancer`.
    pub async fn ensure(
        &self,
        service: &ServiceSpec,
        nodes: &[NodeSpec],
    ) -> Result<LbStatus, LbError> {
        // Checked before anything is written.
        let ranges = service.source_ranges()?;
        let mut result = self.converge(service, nodes).await;
        if let Ok(done) = &mut result
            && self.config.manage_firewall
        {
            let ips: Vec<IpAddr> = done.vips.iter().collect();
            let exposure = Exposure::of(service, &ips, &done.internal);
            match self.converge_firewall(service, &exposure, &ranges).await {
                Ok(made) => done.writes += made,
                Err(error) => result = Err(error),
            }
        }
        match &result {
            Ok(Converged {
                vips,
                writes,
                existed,
                ..
            }) if *writes > 0 => {
                let event = if *existed {
                    "UpdatedLoadbalancer"
                } else {
                    "CreatedLoadbalancer"
                };
                self.rde
                    .record(RdeRecord::Ensured {
                        service: service.key(),
                        ip: vips
                            .ordered(service.first_family())
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(","),
                        event,
                    })
                    .await;
            }
            Ok(_) => {}
            Err(error) => {
                self.rde
                    .record(RdeRecord::Failed {
                        service: service.key(),
                        name: "CreateLoadbalancerError",
                        message: error.to_string(),
                    })
                    .await;
            }
        }
        result.map(|done| LbStatus {
            warnings: done.warnings,
            changes: done.changes,
            source_ranges_unenforced: !ranges.is_empty() && !self.config.manage_firewall,
            dual_stack_not_served: done.dual_stack_not_served,
            recheck_after: done.drain_ends.map(until_unix),
            ..LbStatus::at(&done.vips.ordered(service.first_family()))
        })
    }

    /// The node set changed: the same reconcile, which then rewrites only
    /// the pools' members. Returns when to reconcile again, when a drain
    /// has started or is under way.
    pub async fn update(
        &self,
        service: &ServiceSpec,
        nodes: &[NodeSpec],
    ) -> Result<Option<Duration>, LbError> {
        self.ensure(service, nodes).await.map(|s| s.recheck_after)
    }

    /// Reads the gateway's load-balancer objects again now, for every
    /// reconcile after it (drift repair compares Services against it).
    pub async fn refresh_gateway(&self) -> Result<(), LbError> {
        self.member_groups.invalidate().await;
        self.snapshot
            .refreshed(&self.client, &self.gateway.id)
            .await
            .map(|_| ())
            .map_err(LbError::vcd(
                "(drift check)",
                "reading the gateway's load balancer objects".into(),
            ))
    }

    /// Plans and applies the Service's firewall rule; how many writes it took.
    async fn converge_firewall(
        &self,
        service: &ServiceSpec,
        exposure: &Exposure,
        ranges: &[SourceRange],
    ) -> Result<usize, LbError> {
        let ops = self
            .plan_firewall(&self.owner(service), &self.names(service), exposure, ranges)
            .await?;
        let key = service.key();
        self.applier(&key)
            .apply(firewall_ops(ops), &ServiceObjects::default())
            .await
    }

    /// The applier of `service`'s writes (its name, for messages).
    pub(super) fn applier<'a>(&'a self, service: &'a str) -> Applier<'a> {
        Applier {
            client: &self.client,
            member_groups: &self.member_groups,
            upload_pins: &self.upload_pins,
            catalog: &self.catalog,
            snapshot: &self.snapshot,
            gateway_id: &self.gateway.id,
            service,
        }
    }

    pub(super) async fn observe(
        &self,
        service: &ServiceSpec,
    ) -> Result<(Arc<GatewayView>, ServiceObjects), LbError> {
        let view = self
            .snapshot
            .view(&self.client, &self.gateway.id)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "reading the gateway's load balancer objects".into(),
            ))?;
        let owner = self.owner(service);
        // A later vcd-ccm's objects of this Service: hands off, before
        // anything is planned (its names would collide with ours anyway).
        let newer: Vec<NewerObject> = view
            .newer_objects()
            .into_iter()
            .filter(|o| o.tag.names_service_of(&owner))
            .collect();
        if let Some(first) = newer.first() {
            newer.iter().for_each(|o| self.newer_formats.notice(o));
            let objects: Vec<String> = newer.iter().map(NewerObject::describe).collect();
            return Err(LbError::NewerFormat {
                service: service.key(),
                objects: objects.join(", "),
                format: first.tag.format,
                known: FORMAT,
            });
        }
        let observed = view.owned_by(&owner);
        Ok((view, observed))
    }
}

/// How long until `deadline` (Unix seconds), a second past it so the
/// reconcile then finds the drain over.
fn until_unix(deadline: u64) -> Duration {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Duration::from_secs(deadline + 1).saturating_sub(now)
}

/// Firewall writes as the applier takes them.
pub(super) fn firewall_ops(ops: Vec<FirewallOp>) -> Vec<Op> {
    ops.into_iter().map(Op::Firewall).collect()
}

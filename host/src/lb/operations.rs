//! The public operations `get`, `ensure` and `update` (`delete` is in
//! `delete.rs`), and what every operation starts from: the gateway as
//! observed and the applier of writes.

use std::net::IpAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::lb::apply::applier::Applier;
use crate::lb::apply::rde::RdeRecord;
use crate::lb::context::Context;
use crate::lb::decide::current;
use crate::lb::errors::LbError;
use crate::lb::observe::objects::ServiceObjects;
use crate::lb::observed;
use crate::lb::plan::firewall;
use crate::lb::plan::firewall::Exposure;
use crate::lb::plan::op::{FirewallOp, Op};
use crate::lb::reconcile;
use crate::lb::reconcile::Converged;
use crate::lb::service::{Announcement, LbStatus, NodeSpec, ServiceSpec};
use crate::lb::source_ranges::SourceRange;
use crate::lb::vips::Vips;

/// The Service's load balancer as VCD holds it: `None` when it owns no
/// object on the gateway.
pub(in crate::lb) async fn get(
    ctx: &Context,
    service: &ServiceSpec,
) -> Result<Option<LbStatus>, LbError> {
    service.check()?;
    let observed = observed::observe(ctx, service).await?.1;
    if observed.is_empty() {
        return Ok(None);
    }
    let vips = current::external_ips(ctx, &observed, &service.reported_ips)
        .into_iter()
        .rev()
        .collect::<Vips>();
    Ok(Some(LbStatus::at(
        &vips.ordered(service.first_family()),
        &Announcement::default(),
    )))
}

/// Creates or converges the Service's load balancer; returns the
/// ingress to write to `status.loadBalancer`.
pub(in crate::lb) async fn ensure(
    ctx: &Context,
    service: &ServiceSpec,
    nodes: &[NodeSpec],
) -> Result<LbStatus, LbError> {
    // Checked before anything is written.
    let ranges = service.source_ranges()?;
    let mut result = reconcile::converge(ctx, service, nodes).await;
    if let Ok(done) = &mut result
        && ctx.config.manage_firewall
    {
        let ips: Vec<IpAddr> = done.vips.iter().collect();
        let exposure = Exposure::of(service, &ips, &done.internal);
        match converge_firewall(ctx, service, &exposure, &ranges).await {
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
            ctx.rde
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
            ctx.rde
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
        source_ranges_unenforced: !ranges.is_empty() && !ctx.config.manage_firewall,
        dual_stack_not_served: done.dual_stack_not_served,
        recheck_after: done.drain_ends.map(until_unix),
        moved: done.moved,
        ..LbStatus::at(
            &done.vips.ordered(service.first_family()),
            &done.announcement,
        )
    })
}

/// Reads the gateway's load-balancer objects again now, for every
/// reconcile after it (drift repair compares Services against it).
pub(in crate::lb) async fn refresh_gateway(ctx: &Context) -> Result<(), LbError> {
    ctx.member_groups.invalidate().await;
    ctx.monitors.invalidate().await;
    ctx.snapshot
        .refreshed(&ctx.client, &ctx.gateway.id)
        .await
        .map(|_| ())
        .map_err(LbError::vcd(
            "(drift check)",
            "reading the gateway's load balancer objects".into(),
        ))
}

/// Plans and applies the Service's firewall rule; how many writes it took.
async fn converge_firewall(
    ctx: &Context,
    service: &ServiceSpec,
    exposure: &Exposure,
    ranges: &[SourceRange],
) -> Result<usize, LbError> {
    let ops = firewall::plan_firewall(
        ctx,
        &ctx.owner(service),
        &ctx.names(service),
        exposure,
        ranges,
    )
    .await?;
    let key = service.key();
    Applier::new(ctx, &key)
        .apply(firewall_ops(ops), &ServiceObjects::default())
        .await
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

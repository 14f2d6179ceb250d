//! Deleting a Service's load balancer: its objects, the certificate
//! uploads only it used, the upstream CCM's objects a takeover had not
//! replaced yet, its IP Space claims and an allocation the journal noted
//! that was never claimed.

use crate::lb::apply::applier::Applier;
use crate::lb::apply::rde::RdeRecord;
use crate::lb::context::Context;
use crate::lb::decide::allocations;
use crate::lb::decide::current;
use crate::lb::errors::LbError;
use crate::lb::journal::Noted;
use crate::lb::observe::objects::{GatewayView, ServiceObjects};
use crate::lb::observed;
use crate::lb::operations::firewall_ops;
use crate::lb::plan;
use crate::lb::plan::certificate_prunes as prune;
use crate::lb::plan::claims::hand_off;
use crate::lb::plan::firewall;
use crate::lb::plan::members;
use crate::lb::plan::op::{AddressOp, Op};
use crate::lb::plan::upstream;
use crate::lb::planning;
use crate::lb::service::ServiceSpec;

/// Removes every object the Service owns and releases its IP Space
/// allocations. Needs only namespace, name and uid of the Service.
pub(in crate::lb) async fn delete(ctx: &Context, service: &ServiceSpec) -> Result<(), LbError> {
    service.check()?;
    let key = service.key();
    let result = delete_owned(ctx, service).await;
    match &result {
        Ok(Some(ip)) => {
            ctx.rde
                .record(RdeRecord::Deleted {
                    service: key,
                    ip: Some(ip.clone()),
                })
                .await
        }
        Ok(None) => {}
        Err(error) => {
            ctx.rde
                .record(RdeRecord::Failed {
                    service: key,
                    name: "DeleteLoadbalancerError",
                    message: error.to_string(),
                })
                .await
        }
    }
    result.map(|_| ())
}

async fn delete_owned(ctx: &Context, service: &ServiceSpec) -> Result<Option<String>, LbError> {
    let (view, observed) = observed::observe(ctx, service).await?;
    let upstream = upstream::upstream_objects(ctx, service, &view);
    let ip = current::external_ips(ctx, &observed, &service.reported_ips)
        .first()
        .map(ToString::to_string)
        .or(upstream.ip.clone());
    let mut ops = plan::teardown(&observed);
    ops.extend(planning::monitor_deletes(ctx, &service.key(), &ops, false).await?);
    let mut changed = !ops.is_empty() || !upstream.deletes.is_empty();
    // The rule goes first: it must not outlive the address it lets in.
    if ctx.config.manage_firewall {
        let removal =
            firewall::plan_firewall_removal(ctx, &ctx.owner(service), &ctx.names(service)).await?;
        changed |= !removal.is_empty();
        Applier::new(ctx, &service.key())
            .apply(firewall_ops(removal), &observed)
            .await?;
    }
    // Its IP set, once no pool uses it.
    let removal = members::own_set_removal(ctx, &ctx.owner(service), &ctx.names(service)).await?;
    changed |= removal.is_some();
    ops.extend(removal);
    Applier::new(ctx, &service.name)
        .apply(ops, &observed)
        .await?;
    // A selector set it shared, once no pool uses it.
    let unused = planning::unused_selector_sets(ctx, service, &observed, None).await?;
    changed |= !unused.is_empty();
    Applier::new(ctx, &service.name)
        .apply(unused, &ServiceObjects::default())
        .await?;
    // An upload a failed reconcile left unused goes with its Service too.
    let leftovers = crate::lb::plan::certificate_prunes::Leftovers {
        referenced: observed.certificate_ids(),
        secrets: crate::lb::tls::secret_keys(service),
    };
    let prunes = prune::plan_prunes(ctx, &service.key(), &leftovers).await;
    Applier::new(ctx, &service.key())
        .apply(prunes, &observed)
        .await?;
    // A takeover still waiting leaves the upstream CCM's objects: they
    // go with the Service, as upstream would have deleted them.
    // Its claim is made ours first, so a crash after the deletes cannot
    // leave an upstream-marked allocation that nothing finds again.
    if !upstream.deletes.is_empty() {
        let mut ops = upstream::plan_claim_adoption(ctx, service).await?;
        ops.extend(upstream.deletes);
        Applier::new(ctx, &service.name)
            .apply(ops, &ServiceObjects::default())
            .await?;
    }
    let releases = claim_releases(ctx, service, &view).await?;
    changed |= !releases.is_empty();
    Applier::new(ctx, &service.key())
        .apply(releases, &observed)
        .await?;
    Ok(changed.then(|| ip.unwrap_or_default()))
}

/// IP Spaces: the releases of the Service's claims (or their passing on
/// to a sharer), but for claims marked to outlive it, and of an allocation
/// the journal noted unclaimed.
pub(super) async fn claim_releases(
    ctx: &Context,
    service: &ServiceSpec,
    view: &GatewayView,
) -> Result<Vec<Op>, LbError> {
    if !ctx.source.is_spaces() {
        return Ok(Vec::new());
    }
    let owner = ctx.owner(service);
    let claims = allocations::find_claims(&ctx.client, ctx.source.spaces(), &owner)
        .await
        .map_err(LbError::vcd(
            &service.key(),
            "finding the Service's IP Space allocations".into(),
        ))?;
    let mut releases: Vec<Op> = claims
        .into_iter()
        .filter(|(_, allocation)| !allocations::retained(allocation))
        .map(|(space_id, allocation)| {
            Op::Address(hand_off(view, space_id, allocation, &owner, None))
        })
        .collect();
    releases.extend(noted_release(ctx, service).await?);
    Ok(releases)
}

/// The release of an allocation the journal noted that a crash or a
/// lost answer left unclaimed, if there is one.
async fn noted_release(ctx: &Context, service: &ServiceSpec) -> Result<Option<Op>, LbError> {
    let Some(noted) = ctx.journal.noted(service).as_deref().and_then(Noted::parse) else {
        return Ok(None);
    };
    if !ctx.source.spaces().iter().any(|s| s.id == noted.space_id) {
        return Ok(None);
    }
    let found = ctx
        .client
        .ip_spaces()
        .find_allocation(&noted.space_id, &noted.ip.to_string())
        .await
        .map_err(LbError::vcd(
            &service.key(),
            "looking up the noted IP Space allocation".into(),
        ))?;
    Ok(found.filter(allocations::unmarked).map(|allocation| {
        Op::Address(AddressOp::Release {
            space_id: noted.space_id,
            allocation,
        })
    }))
}

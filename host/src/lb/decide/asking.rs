//! Asking the Service's policy: the Service's TLS Secrets are read and
//! checked, then offered as certificates beside the library's, and the
//! policy decides. A refused Secret or decision writes nothing; the plan
//! uploads the Secrets the decision uses once everything else is decided.

use std::collections::HashSet;
use std::net::IpAddr;

use crate::lb::context::Context;
use crate::lb::decide::address::run_policy;
use crate::lb::decide::allocations;
use crate::lb::decide::certificates as upload;
use crate::lb::decide::dual_stack;
use crate::lb::decide::engine_groups;
use crate::lb::decide::input::{InputParts, build};
use crate::lb::decide::sharing::{self, Group};
use crate::lb::errors::LbError;
use crate::lb::observe::objects::GatewayView;
use crate::lb::ranges::{family_name, family_of};
use crate::lb::service::ServiceSpec;
use crate::lb::tls::CheckedSecret;
use crate::policy::errors::EvalError;
use crate::policy::model::{AddressPool, Decision, DecisionError, PoolSource};
use crate::vcd::resources::certificate::CertificateItem;
use crate::vcd::resources::seg::SegAssignment;

/// A checked decision and what it needs to be planned.
pub struct Decided {
    pub decision: Decision,
    /// The certificates offered; a Secret's entry has no id until uploaded.
    pub certificates: Vec<CertificateItem>,
    /// The Secrets the Service names, checked.
    pub secrets: Vec<CheckedSecret>,
    /// The certificate library as the decision saw it.
    pub library: Vec<CertificateItem>,
    /// The gateway's service engine groups as the decision saw them.
    pub engine_groups: Vec<SegAssignment>,
}

fn policy_needs_certificates(error: &LbError) -> bool {
    match error {
        LbError::Policy {
            source:
                EvalError::Declined {
                    error: DecisionError::CertificateNotFound(_),
                    ..
                },
            ..
        } => true,
        LbError::Policy {
            source: EvalError::InvalidDecision { problem, .. },
            ..
        } => problem.contains("certificate"),
        _ => false,
    }
}

/// The source's pools of the families that can be served here, then the
/// internal ones, then the sharing groups' (last, so a policy taking the
/// first pool with room never shares by accident).
fn offered_pools(ctx: &Context, in_use: &HashSet<IpAddr>, shared: &[Group]) -> Vec<AddressPool> {
    let mut pools = ctx.source.address_pools(in_use);
    pools.extend(ctx.internal.address_pools(in_use));
    pools.retain(|pool| {
        pool.ranges.first().is_none_or(|r| {
            let family = family_of(IpAddr::from(r.first));
            dual_stack::family_unavailable(ctx, family, !pool.external).is_none()
        })
    });
    pools.extend(sharing::pools(shared, |ip| match ctx.source.space_of(ip) {
        Some(_) => PoolSource::IpSpace,
        None => PoolSource::IpBlock,
    }));
    pools
}

/// IP Spaces: the addresses kept for the Service's namespace and name, read
/// only for a Service without an address (a kept address is taken back when
/// the Service is created again, so a no-op pass reads nothing).
async fn retained(
    ctx: &Context,
    service: &ServiceSpec,
    current: Option<IpAddr>,
) -> Result<Vec<IpAddr>, LbError> {
    if current.is_some() || !ctx.source.is_spaces() {
        return Ok(Vec::new());
    }
    allocations::retained_for(&ctx.client, ctx.source.spaces(), &ctx.owner(service))
        .await
        .map_err(LbError::vcd(
            &service.key(),
            "reading the addresses kept for the Service".into(),
        ))
}

pub(in crate::lb) async fn decide(
    ctx: &Context,
    service: &ServiceSpec,
    view: &GatewayView,
    current: Option<IpAddr>,
    shared: &[Group],
) -> Result<Decided, LbError> {
    let in_use: HashSet<IpAddr> = view.addresses_in_use().into_iter().collect();
    let secrets = upload::read_tls_secrets(ctx, service).await?;
    let retained = retained(ctx, service, current).await?;
    let mut fresh = false;
    loop {
        let library = ctx
            .catalog
            .certificates(&ctx.client, fresh)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "reading the certificate library".into(),
            ))?;
        let certificates = upload::offered(&library, &secrets);
        let engine_groups = engine_groups::engine_groups(ctx, service).await?;
        let input = build(InputParts {
            service,
            cluster: &ctx.cluster,
            pools: offered_pools(ctx, &in_use, shared),
            certificates: &certificates,
            profiles: &ctx.features.profiles,
            engine_groups: engine_groups::offered(&engine_groups),
            current,
            retained: retained.clone(),
        });
        match run_policy(&ctx.registry, input).await {
            Ok(decision) => {
                return Ok(Decided {
                    decision,
                    certificates,
                    secrets,
                    library,
                    engine_groups,
                });
            }
            // The library may have gained the certificate since it was read.
            Err(error) if !fresh && policy_needs_certificates(&error) => fresh = true,
            Err(error) => return Err(why_family_missing(ctx, error)),
        }
    }
}

/// A policy that found no pool of the Service's family, or not the
/// address it was asked for, where the gateway has pools of that family
/// but they cannot be served: the hint says why.
fn why_family_missing(ctx: &Context, error: LbError) -> LbError {
    let LbError::Policy { source, hint } = error else {
        return error;
    };
    let family = match &source {
        EvalError::Declined {
            error: DecisionError::UnsupportedIpFamily(family),
            ..
        } => Some(*family),
        EvalError::Declined {
            error: DecisionError::RequestedAddressUnavailable(ip),
            ..
        } => Some(family_of(IpAddr::from(*ip))),
        _ => None,
    };
    let why = family
        .filter(|family| !ctx.source.pools_of(*family).is_empty())
        .and_then(|family| {
            let reason = dual_stack::family_unavailable(ctx, family, false)?;
            Some(format!(
                "; the gateway's {} pools are not offered: {reason}",
                family_name(family)
            ))
        });
    LbError::Policy {
        source,
        hint: hint + &why.unwrap_or_default(),
    }
}

//! The reconcile behind `ensure`: observe → decide → plan → apply →
//! verify, passes repeated while another owner contests the address.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};

use crate::lb::apply::applier::Applier;
use crate::lb::context::Context;
use crate::lb::decide;
use crate::lb::decide::current;
use crate::lb::decide::current::Found;
use crate::lb::errors::LbError;
use crate::lb::observe::objects::ServiceObjects;
use crate::lb::observed;
use crate::lb::plan::op::Op;
use crate::lb::plan::upstream;
use crate::lb::plan::upstream::UpstreamObjects;
use crate::lb::planning::{self, Planned, Step};
use crate::lb::service::{Announcement, NodeSpec, ServiceSpec};
use crate::lb::tls::Pinned;
use crate::lb::vips::Vips;

/// How often a reconcile moves to another address after losing one to a
/// concurrent owner before it gives up until the next reconcile.
const MAX_CLAIM_ATTEMPTS: u32 = 4;

/// What a converged reconcile reports.
pub(super) struct Converged {
    pub vips: Vips,
    /// One-arm internal VIPs of the Service's virtual services.
    pub internal: Vec<Ipv4Addr>,
    pub writes: usize,
    /// What the last pass's writes of load-balancer objects did.
    pub changes: Vec<String>,
    /// Whether the Service had objects before.
    pub existed: bool,
    pub warnings: Vec<String>,
    /// Why a Service preferring two families has one address.
    pub dual_stack_not_served: Option<String>,
    /// When a drain under way ends (Unix seconds): reconcile again then.
    pub drain_ends: Option<u64>,
    /// How the status announces the addresses.
    pub announcement: Announcement,
    /// The Service moved between an internal and an external address.
    pub moved: Option<String>,
}

/// How one reconcile pass ended.
enum Pass {
    Done {
        vips: Vips,
        internal: Vec<Ipv4Addr>,
        writes: usize,
        /// What its writes of load-balancer objects did.
        changes: Vec<String>,
        /// The policy's warnings, for Events on the Service.
        warnings: Vec<String>,
        dual_stack_not_served: Option<String>,
        drain_ends: Option<u64>,
        announcement: Announcement,
        moved: Option<String>,
    },
    /// The Service's address was allocated, or its Secrets uploaded:
    /// decide again with them. The pins hold the uploads until the Service
    /// is reconciled.
    Again { writes: usize, pins: Vec<Pinned> },
    /// The IP Space refused to allocate `ip`; start over without it.
    Refused { ip: IpAddr, error: LbError },
    /// Another owner holds `ip` too; start over without it.
    Contested {
        ip: IpAddr,
        holder: String,
        writes: usize,
    },
}

/// Reconciles until no other owner contests the address.
pub(super) async fn converge(
    ctx: &Context,
    service: &ServiceSpec,
    nodes: &[NodeSpec],
) -> Result<Converged, LbError> {
    planning::admissible(ctx, service)?;
    let mut excluded = HashSet::new();
    let mut writes = 0;
    let mut existed = None;
    let mut last = None;
    let mut refused = None;
    let mut reobserved = false;
    let mut held = Vec::new();
    for _ in 0..MAX_CLAIM_ATTEMPTS {
        let pass = match pass(ctx, service, nodes, &excluded, &mut existed).await {
            // An object our observation missed landed meanwhile (a task
            // left in flight by a stopped process): look again once.
            Err(error) if !reobserved && error.is_duplicate_name() => {
                tracing::info!(service = %service.key(), %error, "an object appeared since the gateway was read; reading it again");
                ctx.snapshot.invalidate();
                reobserved = true;
                continue;
            }
            other => other?,
        };
        match pass {
            Pass::Done {
                vips,
                internal,
                writes: made,
                changes,
                warnings,
                dual_stack_not_served,
                drain_ends,
                announcement,
                moved,
            } => {
                return Ok(Converged {
                    vips,
                    internal,
                    writes: writes + made,
                    changes,
                    existed: existed.unwrap_or(false),
                    warnings,
                    dual_stack_not_served,
                    drain_ends,
                    announcement,
                    moved,
                });
            }
            Pass::Contested {
                ip,
                holder,
                writes: made,
            } => {
                tracing::info!(service = %service.key(), %ip, %holder, "address taken by another owner at the same time; moving to another");
                writes += made;
                excluded.insert(ip);
                last = Some((ip, holder));
                refused = None;
            }
            Pass::Again { writes: made, pins } => {
                writes += made;
                held.extend(pins);
            }
            Pass::Refused { ip, error } => {
                tracing::info!(service = %service.key(), %error, "the IP Space refused the address; moving to another");
                excluded.insert(ip);
                refused = Some(error);
            }
        }
    }
    if let Some(error) = refused {
        return Err(error);
    }
    let (ip, holder) = last.unwrap_or((IpAddr::V4(Ipv4Addr::UNSPECIFIED), String::new()));
    Err(LbError::ClaimLost {
        service: service.key(),
        ip: ip.to_string(),
        holder,
        attempts: MAX_CLAIM_ATTEMPTS,
    })
}

async fn pass(
    ctx: &Context,
    service: &ServiceSpec,
    nodes: &[NodeSpec],
    excluded: &HashSet<IpAddr>,
    existed: &mut Option<bool>,
) -> Result<Pass, LbError> {
    let (view, observed) = observed::observe(ctx, service).await?;
    let owner = ctx.owner(service);
    let upstream = match observed.is_empty() {
        true => upstream::upstream_objects(ctx, service, &view),
        false => UpstreamObjects::default(),
    };
    let taking_over = upstream.deletes.len();
    existed.get_or_insert(!observed.is_empty() || taking_over > 0);
    if taking_over > 0 {
        tracing::info!(service = %service.key(), objects = taking_over, ip = ?upstream.ip, "taking over the upstream CCM's load balancer: deciding first");
        let adoption = upstream::plan_claim_adoption(ctx, service).await?;
        Applier::new(ctx, &service.name)
            .apply(adoption, &observed)
            .await?;
    }
    let found = Found {
        view: &view,
        observed: &observed,
        upstream_ip: upstream.ip.as_deref(),
        owner: &owner,
        excluded,
    };
    let currents = current::current_addresses(ctx, service, &found).await?;
    if let Some((ip, holder)) = currents.contested() {
        return Ok(Pass::Contested {
            ip,
            holder,
            writes: 0,
        });
    }
    let step = planning::plan(ctx, service, nodes, &found, &currents)
        .await
        .map_err(|source| match taking_over {
            0 => source,
            objects => LbError::TakeoverWaiting {
                objects,
                source: Box::new(source),
            },
        })?;
    let planned = match step {
        Step::Planned(planned) => planned,
        Step::AllocateFirst(op) => {
            let writes = Applier::noting(ctx, &service.name, service)
                .apply(vec![*op], &observed)
                .await?;
            return Ok(Pass::Again {
                writes,
                pins: Vec::new(),
            });
        }
        Step::UploadFirst { ops, pins } => {
            let writes = Applier::new(ctx, &service.name)
                .apply(ops, &observed)
                .await?;
            return Ok(Pass::Again { writes, pins });
        }
    };
    // The address first: a refusal moves the Service to another one
    // before anything else is written.
    let mut writes = match Applier::noting(ctx, &service.name, service)
        .apply(planned.claims.clone(), &observed)
        .await
    {
        Err(error @ LbError::AllocationRefused { ip: Some(ip), .. }) => {
            return Ok(Pass::Refused { ip, error });
        }
        other => other?,
    };
    if taking_over > 0 {
        writes += Applier::new(ctx, &service.name)
            .apply(upstream.deletes, &ServiceObjects::default())
            .await?;
    }
    let Planned {
        claims: address_claims,
        mut ops,
        addresses,
        dual_stack_not_served,
        mut unreserved,
        internal,
        warnings,
        members,
        drain_ends,
        announcement,
        moved,
        retain,
        _pins,
        _monitor_pins,
    } = *planned;
    planning::plan_member_sets(ctx, service, &owner, &members, &mut ops).await?;
    for address in &addresses {
        if address.verify_claim || currents.remembered(address.ip) {
            unreserved.push(address.ip);
        }
    }
    let vips = addresses.iter().map(|a| a.ip).collect::<Vips>();
    let changes: Vec<String> = address_claims
        .iter()
        .chain(&ops)
        .map(Op::describe)
        .collect();
    let applied = Applier::new(ctx, &service.name).apply(ops, &observed).await;
    // A write refused because a racing owner took the address first is
    // a lost claim too, not a failure.
    writes += match applied {
        Err(error) if unreserved.is_empty() => return Err(error),
        Err(error) => match decide::claims::verify(ctx, service, &owner, &unreserved).await? {
            Some((ip, holder)) => {
                return Ok(Pass::Contested { ip, holder, writes });
            }
            None => return Err(error),
        },
        Ok(made) => made,
    };
    if !unreserved.is_empty()
        && let Some((ip, holder)) =
            decide::claims::verify(ctx, service, &owner, &unreserved).await?
    {
        return Ok(Pass::Contested { ip, holder, writes });
    }
    let after =
        planning::plan_after(ctx, service, &view, &observed, &vips, &members, retain).await?;
    Applier::new(ctx, &service.key())
        .apply(after, &observed)
        .await?;
    Ok(Pass::Done {
        vips,
        internal,
        writes,
        changes,
        warnings,
        dual_stack_not_served,
        drain_ends,
        announcement,
        moved,
    })
}

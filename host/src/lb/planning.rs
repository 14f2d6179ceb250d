//! What one pass of a reconcile would write, decided and planned before
//! anything is written: the checks made before any read, the policy's
//! decision and the address it resolves to (with the IP Space write that
//! makes it the Service's), the objects' ops, the member sets', and the
//! writes that follow once the address is verified. `reconcile.rs` applies
//! them; `preview.rs` prints them.

use crate::lb::config::Mode;
use crate::lb::context::Context;
use crate::lb::decide::address::{Address, AddressContext, Resolved};
use crate::lb::decide::asking;
use crate::lb::decide::asking::Decided;
use crate::lb::decide::certificates::{self as upload, Uploads};
use crate::lb::decide::current;
use crate::lb::decide::current::{Currents, Found};
use crate::lb::decide::dual_stack;
use crate::lb::decide::dual_stack::Second;
use crate::lb::decide::engine_groups;
use crate::lb::decide::internal;
use crate::lb::decide::sharing;
use crate::lb::errors::LbError;
use crate::lb::observe::monitors::MonitorPins;
use crate::lb::observe::objects::{GatewayView, ServiceObjects};
use crate::lb::ownership::OwnerTag;
use crate::lb::plan::certificate_prunes as prune;
use crate::lb::plan::certificate_prunes::Leftovers;
use crate::lb::plan::desired::DesiredPort;
use crate::lb::plan::drain;
use crate::lb::plan::member_sets::Members;
use crate::lb::plan::members;
use crate::lb::plan::monitor_ops;
use crate::lb::plan::node_selection::{self, Selection};
use crate::lb::plan::objects::{keeps_address, selector_marks_in_use};
use crate::lb::plan::op::Op;
use crate::lb::plan::virtual_service_diff;
use crate::lb::plan::{self, Target, claims};
use crate::lb::ranges::family_of;
use crate::lb::service::{Announcement, NodeSpec, ServiceSpec};
use crate::lb::tls::{self, Pinned};
use crate::lb::vips::Vips;
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};
use std::time::{SystemTime, UNIX_EPOCH};

/// What planning a pass comes to.
pub(super) enum Step {
    Planned(Box<Planned>),
    /// Below API 37.2 an IP Space picks the address: its allocation is
    /// made, and the Service decided again with it.
    AllocateFirst(Box<Op>),
    /// The decision uses Secrets the library lacks: they are uploaded (the
    /// ops, all `UploadCertificate`), and the Service decided again with
    /// the ids VCD gives them. The pins hold the uploads until then.
    UploadFirst {
        ops: Vec<Op>,
        pins: Vec<Pinned>,
    },
}

/// A pass's decision, made before anything is written.
pub(super) struct Planned {
    /// The IP Space writes that make the addresses the Service's, applied
    /// before the rest.
    pub claims: Vec<Op>,
    pub ops: Vec<Op>,
    /// The external addresses: the decided one, then the second family's.
    pub addresses: Vec<Address>,
    pub dual_stack_not_served: Option<String>,
    /// New one-arm internal VIPs: nothing reserves them until verified.
    pub unreserved: Vec<IpAddr>,
    /// Every one-arm internal VIP of the Service.
    pub internal: Vec<Ipv4Addr>,
    pub warnings: Vec<String>,
    /// Where the pools take their members from.
    pub members: Members,
    /// When a drain under way ends (Unix seconds).
    pub drain_ends: Option<u64>,
    /// How the status announces the addresses.
    pub announcement: Announcement,
    /// The Event's message when the Service moves between an internal and
    /// an external address.
    pub moved: Option<String>,
    /// The policy keeps the address past the Service (IP Spaces).
    pub retain: bool,
    /// Uploads the virtual services will use; unpinned when the pass ends.
    pub _pins: Vec<Pinned>,
    /// Tenant monitors the pools want; unpinned when the pass ends.
    pub _monitor_pins: Option<MonitorPins>,
}

/// What is refused before anything is read: a malformed Service, a
/// sharing key the mode cannot serve, no port with a node port.
pub(super) fn admissible(ctx: &Context, service: &ServiceSpec) -> Result<(), LbError> {
    service.check()?;
    sharing::check_sharing(&ctx.mode, service)?;
    if !service
        .ports
        .iter()
        .any(|p| p.node_port.is_some_and(|n| n > 0))
    {
        return Err(LbError::InvalidService {
            service: service.key(),
            problem: "no port has a nodePort; NSX ALB pools forward to node ports (allocateLoadBalancerNodePorts: false is not supported)".to_string(),
        });
    }
    Ok(())
}

/// The writes that follow a pass's, once its address is verified: on IP
/// Spaces, the release of claims a move left (an address held, or still
/// in the status, beside the new ones; perhaps a release cut short) and
/// the rewrite of claims in an older tag format (with the `retain` mark the
/// decision has); then the deletes of
/// uploads the Service no longer uses, and of a selector set it moved off
/// that no other pool uses.
pub(super) async fn plan_after(
    ctx: &Context,
    service: &ServiceSpec,
    view: &GatewayView,
    observed: &ServiceObjects,
    vips: &Vips,
    members: &Members,
    retain: bool,
) -> Result<Vec<Op>, LbError> {
    let owner = &ctx.owner(service);
    let now = match members {
        Members::Group(want) => want.mark.as_deref(),
        Members::Listed => None,
    };
    let mut ops = unused_selector_sets(ctx, service, observed, now).await?;
    let moved = current::external_ips(ctx, observed, &service.reported_ips)
        .into_iter()
        .chain(service.reported_ips.iter().filter_map(|r| r.parse().ok()))
        .any(|ip| !vips.contains(ip));
    if ctx.source.is_spaces() && moved {
        ops.extend(
            claims::other_releases(&ctx.client, ctx.source.spaces(), view, owner, vips).await?,
        );
    }
    if ctx.source.is_spaces() && observed.predates_format() {
        let adopt = claims::claims_to_adopt(&ctx.client, ctx.source.spaces(), owner, retain)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "finding the Service's IP Space claims of an older tag format".into(),
            ))?;
        ops.extend(adopt);
    }
    let leftovers = Leftovers {
        referenced: observed.certificate_ids(),
        secrets: tls::secret_keys(service),
    };
    ops.extend(prune::plan_prunes(ctx, &service.key(), &leftovers).await);
    Ok(ops)
}

/// The deletes of the selector sets the Service's pools used (as
/// `observed`) other than `now`, which no other pool on the gateway uses.
pub(super) async fn unused_selector_sets(
    ctx: &Context,
    service: &ServiceSpec,
    observed: &ServiceObjects,
    now: Option<&str>,
) -> Result<Vec<Op>, LbError> {
    let before = selector_marks_in_use(
        observed
            .pools
            .values()
            .map(|p| p.object.description.as_deref()),
    );
    if before.iter().all(|mark| Some(mark.as_str()) == now) {
        return Ok(Vec::new());
    }
    let view = ctx.gateway_view(&service.key()).await?;
    let others = view
        .pools
        .iter()
        .filter(|p| !observed.pools.contains_key(&p.name));
    let mut used = selector_marks_in_use(others.map(|p| p.description.as_deref()));
    used.extend(now.map(str::to_string));
    ctx.member_groups
        .unused_selector_sets(
            &ctx.client,
            &ctx.gateway.id,
            &used,
            Some(&before),
            &service.key(),
        )
        .await
}

/// Adds the writes of the IP sets the pools take their members from: the
/// set first (the pools name it; a node join is this one write), and a
/// set of the Service's own the pools no longer use last (no longer
/// `Local`).
pub(super) async fn plan_member_sets(
    ctx: &Context,
    service: &ServiceSpec,
    owner: &OwnerTag,
    members: &Members,
    ops: &mut Vec<Op>,
) -> Result<(), LbError> {
    if let Members::Group(want) = members {
        let (group, write) = ctx
            .member_groups
            .plan_set(&ctx.client, &ctx.gateway, want, owner, &service.key())
            .await?;
        plan::point_at_group(ops, &group);
        ops.splice(0..0, write);
    }
    if !matches!(members, Members::Group(want) if want.own) {
        ops.extend(members::own_set_removal(ctx, owner, &ctx.names(service)).await?);
    }
    Ok(())
}

/// Decides and plans without writing anything: the policy's decision, the
/// address it resolves to, internal VIPs, and the writes that would
/// converge the Service (or, first, the address's allocation or the
/// certificate uploads those writes need).
pub(super) async fn plan(
    ctx: &Context,
    service: &ServiceSpec,
    nodes: &[NodeSpec],
    found: &Found<'_>,
    currents: &Currents,
) -> Result<Step, LbError> {
    let Found {
        view,
        observed,
        owner,
        excluded,
        ..
    } = *found;
    // An address of a family that cannot be served here (IPv6 after a
    // change to one-arm mode) is not kept: the Service moves off it.
    let current = currents
        .vips()
        .iter()
        .filter(|ip| {
            let internal = ctx.is_internal(*ip);
            dual_stack::family_unavailable(ctx, family_of(*ip), internal).is_none()
        })
        .collect::<Vips>();
    let first_current = current.ordered(service.first_family()).first().copied();
    // A group address another owner holds too, or that this reconcile
    // lost to one, is not offered: the group moves to a fresh one.
    let groups = sharing::groups(view, owner, |ip| {
        ctx.source.pool_of(ip).is_some()
            && !excluded.contains(&ip)
            && view.other_holder(&ip.to_string(), owner).is_none()
    });
    let Decided {
        decision,
        mut certificates,
        secrets,
        library,
        engine_groups,
    } = asking::decide(ctx, service, view, first_current, &groups).await?;
    for warning in &decision.warnings {
        tracing::warn!(service = %service.key(), %warning, "policy warning");
    }
    let selection = Selection::of(nodes, &decision.node_selector);
    let nodes = &selection.nodes;
    let drains = decision.traffic.iter().any(|t| t.drain_seconds > 0);
    let members = members::members_for(ctx, service, &selection, observed, owner, drains)?;
    let names = ctx.names(service);
    if let Some(wanted) = &decision.service_engine_group {
        engine_groups::check_engine_group_room(
            ctx,
            service,
            &names,
            observed,
            wanted,
            &engine_groups,
        )
        .await?;
    }
    let seed = format!("{}/{}", ctx.config.cluster_id, service.uid);
    let context = AddressContext {
        client: &ctx.client,
        gateway_id: &ctx.gateway.id,
        nat: ctx.mode.uses_nat(),
        source: &ctx.source,
        internal: &ctx.internal,
        take_unused: ctx.config.claim_unused_allocations,
        own_internal: &current::internal_vips(ctx, observed),
        journal: ctx.journal.as_ref(),
        spec: service,
        service: &service.key(),
        owner,
        seed: &seed,
        current,
        held: &current::external_ips(ctx, observed, &service.reported_ips)
            .into_iter()
            .collect(),
        excluded,
        used: &view.used_addresses(),
        groups: &groups,
    };
    let address = match context.resolve(&decision.address).await? {
        Resolved::Ready(address) => address,
        Resolved::AllocateFirst(claim) => {
            return Ok(Step::AllocateFirst(Box::new(claims::claim_op(
                claim,
                owner,
                decision.retain_address,
            ))));
        }
    };
    dual_stack::check_family(ctx, service, address.ip)?;
    if owner.share.is_some() {
        sharing::check_ports_free(service, view, owner, &decision, address.ip)?;
    }
    let (second, dual_stack_not_served) =
        match dual_stack::second_address(ctx, service, &context, owner, address.ip).await? {
            Second::Served(second) => (Some(second), None),
            Second::AllocateFirst(claim) => {
                return Ok(Step::AllocateFirst(Box::new(claims::claim_op(
                    claim,
                    owner,
                    decision.retain_address,
                ))));
            }
            Second::NotServed(why) => (None, Some(why)),
            Second::NotAsked => (None, None),
        };
    // An internal address is the virtual services' own: no DNAT rule, no
    // one-arm VIP, in every mode.
    let is_internal = ctx.is_internal(address.ip);
    let moved = exposure_move(ctx, service, address.ip);
    let addresses: Vec<Address> = std::iter::once(address).chain(second).collect();
    let external = addresses.iter().map(|a| a.ip).collect::<Vips>();
    let (internal_ips, unreserved) = match is_internal {
        true => Default::default(),
        false => internal::internal_ips(ctx, service, &names, view, observed, excluded, &seed)?,
    };
    // Last, so a refusal above leaves no upload behind.
    let pins = match upload::uploads_used(
        ctx,
        service,
        &decision,
        &secrets,
        &library,
        &mut certificates,
    )
    .await?
    {
        Uploads::Ready(pins) => pins,
        Uploads::First { uploads, pins } => {
            let ops = uploads.into_iter().map(Op::UploadCertificate).collect();
            return Ok(Step::UploadFirst { ops, pins });
        }
    };
    let target = Target {
        mode: if is_internal {
            Mode::SharedVip
        } else {
            ctx.mode
        },
        gateway: &ctx.gateway,
        names: &names,
        owner,
        service,
        nodes,
        members: &members,
        decision: &decision,
        certificates: &certificates,
        external,
        internal_ips: &internal_ips,
        monitoring: ctx.monitoring,
        monitor_names: &ctx.monitor_names,
    };
    let mut desired = plan::desired(&target);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let drain_ends = drain::hold_leaving(&ctx.client, &mut desired, observed, now)
        .await
        .map_err(LbError::vcd(
            &service.key(),
            "reading the pool members of a drain".into(),
        ))?;
    if selection.none_matched && members == Members::Listed {
        node_selection::keep_listed(&ctx.client, &mut desired, observed)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "reading the pool members to keep".into(),
            ))?;
    }
    let edited = match service.read_unsummarised {
        true => virtual_service_diff::edited_lists(&ctx.client, &desired, observed)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "reading the HTTP rule lists for the drift check".into(),
            ))?,
        false => Vec::new(),
    };
    let mut claims: Vec<Op> = addresses
        .iter()
        .filter_map(|a| a.claim.clone())
        .map(|claim| claims::claim_op(claim, owner, decision.retain_address))
        .collect();
    // The claim's `retain` mark changes first, the virtual services' record
    // of it after: a pass cut short between the two finds them apart and
    // looks again.
    if ctx.source.is_spaces() && decision.retain_address != keeps_address(observed) {
        let marks = claims::claims_to_adopt(
            &ctx.client,
            ctx.source.spaces(),
            owner,
            decision.retain_address,
        )
        .await
        .map_err(LbError::vcd(
            &service.key(),
            "reading the Service's IP Space claims to mark whether they outlive it".into(),
        ))?;
        claims.extend(marks);
    }
    let mut ops = plan::diff(&desired, observed, &edited);
    let monitor_pins = plan_monitors(ctx, service, &desired, observed, &mut ops).await?;
    Ok(Step::Planned(Box::new(Planned {
        claims,
        ops,
        addresses,
        dual_stack_not_served,
        unreserved: unreserved.into_iter().map(IpAddr::V4).collect(),
        internal: internal_ips.values().copied().collect(),
        warnings: decision
            .warnings
            .into_iter()
            .chain(selection.warning())
            .collect(),
        members,
        drain_ends,
        announcement: Announcement {
            ip_mode: decision.ip_mode,
            hostname: decision.hostname,
        },
        moved,
        retain: decision.retain_address,
        _pins: pins,
        _monitor_pins: monitor_pins,
    })))
}

/// Adds the writes of the tenant monitors the pools want (API 39.0+) and
/// the deletes of those no pool will use, and pins the wanted ones for the
/// pass. Pools that keep their form and want none need no look at the
/// monitors: a pool written with one has it in its tag.
async fn plan_monitors(
    ctx: &Context,
    service: &ServiceSpec,
    desired: &[DesiredPort],
    observed: &ServiceObjects,
    ops: &mut Vec<Op>,
) -> Result<Option<MonitorPins>, LbError> {
    let wanted: BTreeSet<String> = desired
        .iter()
        .flat_map(|p| &p.monitors)
        .map(|m| m.name.clone())
        .collect();
    let pools_change = ops
        .iter()
        .any(|op| matches!(op, Op::UpdatePool { .. } | Op::DeletePool { .. }));
    if !ctx.monitoring.tenant || (wanted.is_empty() && !pools_change) {
        return Ok(None);
    }
    let pins = ctx.monitors.pin(wanted.clone());
    let view = ctx
        .monitors
        .view(&ctx.client, &ctx.gateway.id, false)
        .await
        .map_err(LbError::vcd(
            &service.key(),
            "reading the cluster's health monitors".into(),
        ))?;
    monitor_ops::add(&view, desired, observed, ops);
    let unused = monitor_ops::unused_after(&view, ops, &wanted);
    ops.extend(unused);
    Ok(Some(pins))
}

/// The deletes of the cluster's tenant monitors (API 39.0+) no pool uses
/// once `ops` ran: after a Service's pools are deleted, or at a sweep
/// (`fresh`, which reads them again, and finds those a crash left before
/// their first assignment).
pub(super) async fn monitor_deletes(
    ctx: &Context,
    service: &str,
    ops: &[Op],
    fresh: bool,
) -> Result<Vec<Op>, LbError> {
    let pools_go = ops.iter().any(|op| matches!(op, Op::DeletePool { .. }));
    if !ctx.monitoring.tenant || !(fresh || pools_go) {
        return Ok(Vec::new());
    }
    let view = ctx
        .monitors
        .view(&ctx.client, &ctx.gateway.id, fresh)
        .await
        .map_err(LbError::vcd(
            service,
            "reading the cluster's health monitors".into(),
        ))?;
    Ok(monitor_ops::unused_after(&view, ops, &BTreeSet::new()))
}

/// The Event's message when the Service moves between an internal and an
/// external address (the status still names the old one).
fn exposure_move(ctx: &Context, service: &ServiceSpec, now: IpAddr) -> Option<String> {
    let before = service
        .reported_ips
        .iter()
        .filter_map(|ip| ip.parse::<IpAddr>().ok())
        .find(|ip| family_of(*ip) == family_of(now))?;
    let kind = |ip: IpAddr| match ctx.is_internal(ip) {
        true => "internal",
        false => "external",
    };
    (kind(before) != kind(now)).then(|| {
        format!(
            "moved from the {} address {before} to the {} address {now}; {before} is released",
            kind(before),
            kind(now)
        )
    })
}

//! Plans without writing (`vcd-ccm plan`): what a reconcile of a Service
//! would write now, what deleting a Service would, and what the sweep
//! would delete of Services that are gone. The same observe → decide →
//! plan as a reconcile, stopped before apply, with the writes that follow
//! (claims released, unused uploads deleted). Writes a decision makes on
//! its way (an IP Space address claimed for a new Service, a certificate
//! uploaded from a Secret) are not planned ops yet: a read-only client
//! refuses them, and the plan of that Service ends in that error.

use std::collections::{BTreeMap, HashSet};
use std::net::IpAddr;

use serde::Serialize;
use serde_json::Value;

use crate::lb::context::Context;
use crate::lb::decide::current;
use crate::lb::decide::current::Found;
use crate::lb::delete;
use crate::lb::errors::LbError;
use crate::lb::naming::Names;
use crate::lb::observe::objects::ServiceObjects;
use crate::lb::observed;
use crate::lb::ownership::OwnerTag;
use crate::lb::plan;
use crate::lb::plan::certificate_prunes as prune;
use crate::lb::plan::certificate_prunes::Leftovers;
use crate::lb::plan::firewall;
use crate::lb::plan::firewall::Exposure;
use crate::lb::plan::members;
use crate::lb::plan::op::{Action, Op};
use crate::lb::plan::upstream;
use crate::lb::planning;
use crate::lb::planning::Step;
use crate::lb::service::{NodeSpec, ServiceSpec};
use crate::lb::sweep;
use crate::lb::tls::secret_keys;
use crate::lb::vips::Vips;

/// One write a reconcile would make.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedWrite {
    /// The kind of VCD object: `pool`, `virtual service`, `nat rule`, ….
    pub kind: &'static str,
    /// The object's name on the gateway.
    pub name: String,
    /// What happens to it.
    pub action: Action,
    /// For an update, the fields the gateway's copy differs in (empty when
    /// the gateway's lists do not show them).
    pub fields: Vec<String>,
}

/// The writes a reconcile of `service` with `nodes` would make now.
pub(in crate::lb) async fn plan_ensure(
    ctx: &Context,
    service: &ServiceSpec,
    nodes: &[NodeSpec],
) -> Result<Vec<PlannedWrite>, LbError> {
    planning::admissible(ctx, service)?;
    let ranges = service.source_ranges()?;
    let (view, observed) = observed::observe(ctx, service).await?;
    let owner = ctx.owner(service);
    if observed.is_empty() {
        let upstream = upstream::upstream_objects(ctx, service, &view);
        if !upstream.deletes.is_empty() {
            // The takeover claims the address before it decides.
            let mut ops = upstream::plan_claim_adoption(ctx, service).await?;
            ops.extend(upstream.deletes);
            return describe(ctx, &ops, &observed).await;
        }
    }
    let excluded = HashSet::new();
    let found = Found {
        view: &view,
        observed: &observed,
        upstream_ip: None,
        owner: &owner,
        excluded: &excluded,
    };
    let currents = current::current_addresses(ctx, service, &found).await?;
    if let Some((ip, holder)) = currents.contested() {
        return Err(LbError::AddressInUse {
            service: service.key(),
            ip: ip.to_string(),
            holder,
        });
    }
    let planned = match planning::plan(ctx, service, nodes, &found, &currents).await? {
        Step::Planned(planned) => planned,
        // What follows depends on the address the IP Space picks.
        Step::AllocateFirst(op) => return describe(ctx, &[*op], &observed).await,
        // What follows names the ids VCD gives the uploads.
        Step::UploadFirst { ops, .. } => return describe(ctx, &ops, &observed).await,
    };
    let mut objects = planned.ops;
    planning::plan_member_sets(ctx, service, &owner, &planned.members, &mut objects).await?;
    // The address first, as a reconcile applies it.
    let mut ops = planned.claims;
    ops.extend(objects);
    if ctx.config.manage_firewall {
        let ips: Vec<IpAddr> = planned.addresses.iter().map(|a| a.ip).collect();
        let exposure = Exposure::of(service, &ips, &planned.internal);
        let firewall =
            firewall::plan_firewall(ctx, &owner, &ctx.names(service), &exposure, &ranges).await?;
        ops.extend(firewall.into_iter().map(Op::Firewall));
    }
    let vips: Vips = planned.addresses.iter().map(|a| a.ip).collect();
    ops.extend(
        planning::plan_after(
            ctx,
            service,
            &view,
            &observed,
            &vips,
            &planned.members,
            planned.retain,
        )
        .await?,
    );
    describe(ctx, &ops, &observed).await
}

/// The deletes a delete of `service` would make now.
pub(in crate::lb) async fn plan_delete(
    ctx: &Context,
    service: &ServiceSpec,
) -> Result<Vec<PlannedWrite>, LbError> {
    let (view, observed) = observed::observe(ctx, service).await?;
    let owner = ctx.owner(service);
    let mut ops = teardown(ctx, &owner, &ctx.names(service), &observed).await?;
    let leftovers = Leftovers {
        referenced: observed.certificate_ids(),
        secrets: secret_keys(service),
    };
    ops.extend(prune::plan_prunes(ctx, &service.key(), &leftovers).await);
    ops.extend(delete::claim_releases(ctx, service, &view).await?);
    describe(ctx, &ops, &observed).await
}

/// The deletes the sweep would make of the objects of Services that
/// are not in `live_uids`, by `namespace/name (uid)`.
pub(in crate::lb) async fn plan_sweep(
    ctx: &Context,
    live_uids: &HashSet<String>,
) -> Result<BTreeMap<String, Vec<PlannedWrite>>, LbError> {
    let view = ctx.gateway_view("(sweep)").await?;
    let descriptions = view.descriptions();
    let mut stale: BTreeMap<String, OwnerTag> = BTreeMap::new();
    for owner in descriptions.filter_map(|d| Some(OwnerTag::parse(d?)?.owner)) {
        if sweep::is_stale(ctx, &owner, live_uids) {
            stale.insert(owner.uid.clone(), owner);
        }
    }
    let mut plans = BTreeMap::new();
    for owner in stale.values() {
        let observed = view.owned_by(owner);
        let names = Names::new(&owner.cluster_id, &owner.namespace, &owner.name, &owner.uid);
        let ops = teardown(ctx, owner, &names, &observed).await?;
        let key = format!("{}/{} ({})", owner.namespace, owner.name, owner.uid);
        plans.insert(key, describe(ctx, &ops, &observed).await?);
    }
    let unused = planning::monitor_deletes(ctx, "(sweep)", &[], true).await?;
    if !unused.is_empty() {
        let writes = describe(ctx, &unused, &ServiceObjects::default()).await?;
        plans.insert("(health monitors no pool uses)".to_string(), writes);
    }
    Ok(plans)
}

/// A Service's deletes in the order a delete makes them: the firewall
/// rule first, then its objects, then its own IP set.
async fn teardown(
    ctx: &Context,
    owner: &OwnerTag,
    names: &Names,
    observed: &ServiceObjects,
) -> Result<Vec<Op>, LbError> {
    let mut ops = Vec::new();
    if ctx.config.manage_firewall {
        let removal = firewall::plan_firewall_removal(ctx, owner, names).await?;
        ops.extend(removal.into_iter().map(Op::Firewall));
    }
    ops.extend(plan::teardown(observed));
    let key = format!("{}/{}", owner.namespace, owner.name);
    ops.extend(planning::monitor_deletes(ctx, &key, &ops, false).await?);
    ops.extend(members::own_set_removal(ctx, owner, names).await?);
    Ok(ops)
}

/// The writes, with the fields each update changes: the object is read
/// whole (the gateway's lists show only part of it).
async fn describe(
    ctx: &Context,
    ops: &[Op],
    observed: &ServiceObjects,
) -> Result<Vec<PlannedWrite>, LbError> {
    let mut writes = Vec::with_capacity(ops.len());
    for op in ops {
        let (kind, name, action) = op.target();
        let fields = match action {
            Action::Update => changed_fields(ctx, op, observed).await?,
            Action::Create | Action::Delete => Vec::new(),
        };
        writes.push(PlannedWrite {
            kind,
            name,
            action,
            fields,
        });
    }
    Ok(writes)
}

/// The top-level fields the update writes that differ from the object
/// as VCD holds it.
async fn changed_fields(
    ctx: &Context,
    op: &Op,
    observed: &ServiceObjects,
) -> Result<Vec<String>, LbError> {
    let read = |what: &str| LbError::vcd("(plan)", format!("reading {what}"));
    let (wanted, current) = match op {
        Op::UpdatePool { id, pool } => {
            let current = ctx.client.pools().get(id).await.map_err(read(&pool.name))?;
            (json(pool), json(&current))
        }
        Op::UpdateVirtualService { id, vs } | Op::RecordVirtualService { id: Some(id), vs } => {
            let current = ctx
                .client
                .virtual_services()
                .get(id)
                .await
                .map_err(read(&vs.name))?;
            (json(vs), json(&current))
        }
        Op::WriteMonitor(monitor) if monitor.id.is_some() => {
            let id = monitor.id.as_deref().unwrap_or_default();
            let current = ctx
                .client
                .health_monitors()
                .get(id)
                .await
                .map_err(read(&monitor.name))?;
            (json(monitor), json(&current))
        }
        Op::UpdateNat { rule, .. } => match observed.nat_rules.get(&rule.name) {
            Some(current) => (json(rule), json(&current.object)),
            None => return Ok(Vec::new()),
        },
        _ => return Ok(Vec::new()),
    };
    let (Value::Object(wanted), Value::Object(current)) = (wanted, current) else {
        return Ok(Vec::new());
    };
    Ok(wanted
        .iter()
        .filter(|(key, value)| {
            key.as_str() != "id" && !current.get(key.as_str()).is_some_and(|c| covers(c, value))
        })
        .map(|(key, _)| key.clone())
        .collect())
}

/// Whether `current` holds what `wanted` says: VCD adds what it fills in
/// (ids, names of the system objects referred to), and the plan leaves
/// empty the ids the applier fills in from names.
fn covers(current: &Value, wanted: &Value) -> bool {
    match (current, wanted) {
        (_, Value::Null) => true,
        (_, Value::String(text)) if text.is_empty() => true,
        (Value::Object(current), Value::Object(wanted)) => wanted
            .iter()
            .all(|(key, value)| covers(current.get(key).unwrap_or(&Value::Null), value)),
        (Value::Array(current), Value::Array(wanted)) => {
            current.len() == wanted.len() && current.iter().zip(wanted).all(|(c, w)| covers(c, w))
        }
        (current, wanted) => current == wanted,
    }
}

fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_default()
}

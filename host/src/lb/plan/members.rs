//! Where a Service's pools take their members from: the cluster's IP set,
//! the Service's own, or a listed set of Nodes.

use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::naming::Names;
use crate::lb::observe::objects::ServiceObjects;
use crate::lb::ownership::OwnerTag;
use crate::lb::plan::member_sets::{
    GroupWant, MAX_LISTED_MEMBERS, Members, node_addresses, own_want,
};
use crate::lb::plan::node_selection::Selection;
use crate::lb::plan::op::Op;
use crate::lb::service::ServiceSpec;
use crate::policy::model::TrafficPolicy;
use crate::vcd::resources::pool::MEMBER_GROUPS_SINCE;

/// The delete of `owner`'s Service's own IP set, if the gateway holds one.
pub(in crate::lb) async fn own_set_removal(
    ctx: &Context,
    owner: &OwnerTag,
    names: &Names,
) -> Result<Option<Op>, LbError> {
    let service = format!("{}/{}", owner.namespace, owner.name);
    ctx.member_groups
        .plan_removal(
            &ctx.client,
            &ctx.gateway.id,
            &names.node_group(),
            owner,
            &service,
        )
        .await
}

/// Where `service`'s pools take their members from, given the Nodes
/// its selection leaves and what its pools use now (`observed`); before
/// API 37.1 more than 100 of them is an error.
pub(in crate::lb) fn members_for(
    ctx: &Context,
    service: &ServiceSpec,
    selection: &Selection,
    observed: &ServiceObjects,
    owner: &OwnerTag,
    drains: bool,
) -> Result<Members, LbError> {
    let addresses = node_addresses(&selection.nodes);
    let keep = selection.none_matched;
    // An IP set has no member to disable: a drain needs listed members.
    if drains {
        if addresses.len() > MAX_LISTED_MEMBERS {
            return Err(LbError::InvalidService {
                service: service.key(),
                problem: format!(
                    "a drain period disables leaving Nodes in the pools, which then list their members, at most {MAX_LISTED_MEMBERS}, and {} Nodes would serve this Service: drop the drain period, or keep Nodes out with the label node.kubernetes.io/exclude-from-external-load-balancers",
                    addresses.len()
                ),
            });
        }
        return Ok(Members::Listed);
    }
    let version = ctx.client.api_version();
    let why_listed = match ctx.member_groups.refused() {
        _ if version < MEMBER_GROUPS_SINCE => Some(format!(
            "below VCD API {MEMBER_GROUPS_SINCE} (VCD 10.4.1) pools list their members and this VCD speaks {version}; upgrade VCD (from {MEMBER_GROUPS_SINCE} pools take them from an IP set, without that limit)"
        )),
        Some(refused) => Some(format!("{refused}; grant it and restart vcd-ccm")),
        None => None,
    };
    if let Some(why) = why_listed {
        if addresses.len() > MAX_LISTED_MEMBERS {
            return Err(LbError::InvalidService {
                service: service.key(),
                problem: format!(
                    "{} Nodes would serve it, but a pool lists at most {MAX_LISTED_MEMBERS} members: {why}, or keep Nodes out with the label node.kubernetes.io/exclude-from-external-load-balancers",
                    addresses.len()
                ),
            });
        }
        return Ok(Members::Listed);
    }
    let cluster = ctx.member_groups.cluster();
    // No Node meets the selector: the pools keep the set they use now.
    let kept = keep.then(|| used_mark(observed)).flatten();
    Ok(Members::Group(
        match (service.external_traffic_policy, &selection.selector, kept) {
            // Probed Nodes tell the load balancer which have an endpoint.
            (TrafficPolicy::Local, _, _) if !ctx.monitoring.probes_local(service) => GroupWant {
                keep,
                ..own_want(ctx.names(service).node_group(), owner, addresses)
            },
            (_, _, Some(Some(mark))) => cluster.selector_set(mark, addresses, true),
            (_, _, Some(None)) => GroupWant {
                keep: true,
                ..cluster.want(addresses)
            },
            (_, Some(selector), None) => cluster.selecting(selector, addresses, keep),
            (_, None, None) => cluster.want(addresses),
        },
    ))
}

/// What the Service's pools use now, if it has any: `Some(mark)` for a
/// selector set, `None` for the cluster's.
fn used_mark(observed: &ServiceObjects) -> Option<Option<String>> {
    let spec = observed.pools.values().next()?.tag.spec.clone()?;
    Some(spec.split_once('~').map(|(_, mark)| mark.to_string()))
}

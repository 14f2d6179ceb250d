//! Taking over from the upstream CCM. It named its objects after the
//! Service and the cluster (`ingress-vs-<name>-<cluster>-<port>`, …) and
//! tagged nothing. A Service that has no object of ours yet but such
//! objects keeps its external address. Decide, then replace: an upstream IP
//! Space claim is marked as ours, the policy decides with the upstream
//! address as current and the host checks the decision; only then are the
//! upstream objects deleted (a shared VIP cannot hold two virtual services on
//! one port) and ours created on the same address. A refusal leaves the
//! upstream objects serving. All of it is ops, for the applier.

use std::collections::HashSet;

use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::observe::ipam::Space;
use crate::lb::observe::objects::GatewayView;
use crate::lb::ownership::{NewerTag, OwnerTag};
use crate::lb::plan::op::{AddressOp, FirewallOp, Op};
use crate::lb::service::ServiceSpec;
use crate::vcd::VcdClient;
use crate::vcd::resources::ipspace::IpAllocation;

/// Prefixes upstream strips from `clusterid` before naming objects.
const TRIMMED_PREFIXES: [&str; 2] = [
    "urn:vcloud:entity:vmware:",
    "urn:vcloud:entity:cse:nativeCluster:",
];

/// What the upstream CCM left for one Service.
#[derive(Debug, Default)]
pub struct UpstreamObjects {
    /// Deletes of its DNAT rules, virtual services and pools, then of the
    /// tenant port profiles its DNAT rules used.
    pub deletes: Vec<Op>,
    /// The external address it served on.
    pub ip: Option<String>,
}

fn trimmed(cluster_id: &str) -> &str {
    TRIMMED_PREFIXES
        .iter()
        .find_map(|prefix| cluster_id.strip_prefix(prefix))
        .unwrap_or(cluster_id)
}

/// No ownership tag of any format: a newer vcd-ccm's object is never
/// taken for upstream's.
fn untagged(description: Option<&str>) -> bool {
    description.is_none_or(|d| OwnerTag::parse(d).is_none() && NewerTag::parse(d).is_none())
}

/// The untagged objects carrying the names upstream gives this Service's
/// ports in this cluster.
fn find(
    view: &GatewayView,
    cluster_id: &str,
    service: &ServiceSpec,
    uses_nat: bool,
) -> UpstreamObjects {
    let suffixes: HashSet<String> = service
        .ports
        .iter()
        .map(|p| format!("{}-{}-{}", service.name, trimmed(cluster_id), p.name))
        .collect();
    let named = |name: &str, prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| suffixes.contains(rest))
    };
    let mut found = UpstreamObjects::default();
    let mut profiles = Vec::new();
    for rule in &view.nat_rules {
        if named(&rule.name, "dnat-ingress-vs-") && untagged(rule.description.as_deref()) {
            found
                .ip
                .get_or_insert_with(|| rule.external_addresses.clone());
            // Only the profile upstream made for the rule, never a shared one.
            if let Some(profile) = &rule.application_port_profile
                && let Some(name) = profile.name.as_deref()
                && name.strip_prefix("appPort_") == Some(rule.name.as_str())
            {
                profiles.push(Op::Firewall(FirewallOp::DeleteProfile {
                    id: profile.id.clone(),
                    name: name.to_string(),
                }));
            }
            found.deletes.push(Op::DeleteNat {
                id: rule.id.clone().unwrap_or_default(),
                name: rule.name.clone(),
            });
        }
    }
    for vs in &view.virtual_services {
        if named(&vs.name, "ingress-vs-") && untagged(vs.description.as_deref()) {
            if !uses_nat && let Some(vip) = &vs.virtual_ip_address {
                found.ip.get_or_insert_with(|| vip.clone());
            }
            found.deletes.push(Op::DeleteVirtualService {
                id: vs.id.clone(),
                name: vs.name.clone(),
            });
        }
    }
    for pool in &view.pools {
        if named(&pool.name, "ingress-pool-") && untagged(pool.description.as_deref()) {
            found.deletes.push(Op::DeletePool {
                id: pool.id.clone(),
                name: pool.name.clone(),
            });
        }
    }
    found.deletes.extend(profiles);
    found
}

/// Upstream's IP Space claim marker for the Service.
fn upstream_marker(cluster_id: &str, service: &ServiceSpec) -> String {
    format!(
        "cluster-{}-namespace-{}-service-{}",
        trimmed(cluster_id),
        service.namespace,
        service.name
    )
}

/// The marks of upstream's IP Space allocations for the Service as ours,
/// so the address stays allocated and counts as the Service's own. They
/// change nothing that serves traffic, so they are applied before the
/// policy decides: the claim is then the durable record of the address.
async fn claim_adoptions(
    client: &VcdClient,
    spaces: &[Space],
    cluster_id: &str,
    service: &ServiceSpec,
    owner: &OwnerTag,
) -> Result<Vec<Op>, LbError> {
    let theirs = upstream_marker(cluster_id, service);
    let mut ops = Vec::new();
    for space in spaces {
        let claims: Vec<IpAllocation> = client
            .ip_spaces()
            .claimed_allocations(&space.id)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "finding the upstream CCM's IP Space allocation".into(),
            ))?;
        ops.extend(
            claims
                .into_iter()
                .filter(|a| a.description.as_deref() == Some(theirs.as_str()))
                .map(|allocation| {
                    Op::Address(AddressOp::Mark {
                        space_id: space.id.clone(),
                        allocation,
                        marker: owner.format(),
                        holder: service.key(),
                    })
                }),
        );
    }
    Ok(ops)
}

/// What the upstream CCM left for a Service, found without writing.
pub(in crate::lb) fn upstream_objects(
    ctx: &Context,
    service: &ServiceSpec,
    view: &GatewayView,
) -> UpstreamObjects {
    find(view, &ctx.config.cluster_id, service, ctx.mode.uses_nat())
}

/// The first writes of a takeover, before anything is decided: upstream's
/// IP Space claim made ours (nothing that serves traffic changes).
pub(in crate::lb) async fn plan_claim_adoption(
    ctx: &Context,
    service: &ServiceSpec,
) -> Result<Vec<Op>, LbError> {
    if !ctx.source.is_spaces() {
        return Ok(Vec::new());
    }
    let spaces = ctx.source.spaces();
    let owner = ctx.owner(service);
    claim_adoptions(&ctx.client, spaces, &ctx.config.cluster_id, service, &owner).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_ids_are_trimmed_as_upstream_does() {
        assert_eq!(
            trimmed("urn:vcloud:entity:vmware:capvcdCluster:1234"),
            "capvcdCluster:1234"
        );
        assert_eq!(trimmed("urn:vcloud:entity:cse:nativeCluster:42"), "42");
        assert_eq!(trimmed("NO_RDE_a"), "NO_RDE_a");
    }
}

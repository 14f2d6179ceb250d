//! The gateway's load-balancer side: NSX ALB and its feature set, a service
//! engine group with room, free external addresses, and `certAlias` in the
//! library, read the way the load balancer reads them.

use std::collections::HashSet;
use std::net::IpAddr;

use super::findings::{CheckId, Failure, Report, Step, bounded};
use crate::lb::{Features, InternalPools, IpSource, LbConfig, add_private_space, used_addresses};
use crate::vcd::VcdClient;
use crate::vcd::resources::gateway::EdgeGateway;
use crate::vcd::resources::health_monitor::TENANT_MONITORS_SINCE;
use crate::vcd::resources::seg::SegAssignment;

/// The load-balancer checks on `gateway`, or all skipped for the reason given.
pub(super) async fn check(
    client: &VcdClient,
    lb: &LbConfig,
    gateway: Result<&EdgeGateway, &str>,
    report: &mut Report,
) {
    let gateway = match gateway {
        Ok(gateway) => gateway,
        Err(reason) => {
            report.skip(
                &[
                    CheckId::LoadBalancer,
                    CheckId::EngineGroup,
                    CheckId::Addresses,
                    CheckId::Certificate,
                ],
                reason,
            );
            return;
        }
    };
    match report.record(CheckId::LoadBalancer, alb(client, gateway, lb).await) {
        Some(()) => {
            let step = engine_group(client, gateway).await;
            report.record(CheckId::EngineGroup, step);
        }
        None => report.skip(&[CheckId::EngineGroup], "needs NSX ALB on the gateway"),
    }
    let step = addresses(client, gateway, lb).await;
    report.record(CheckId::Addresses, step);
    let step = certificate(client, lb).await;
    report.record(CheckId::Certificate, step);
}

async fn alb(client: &VcdClient, gateway: &EdgeGateway, lb: &LbConfig) -> Step<()> {
    let distributed_only = gateway.is_distributed_only();
    lb.check_gateway(&gateway.name, distributed_only)
        .map_err(|e| {
            Failure::new(
                e.to_string(),
                "Change the setting as said, or place the cluster behind a gateway that is not distributed-only".to_string(),
            )
        })?;
    let features = bounded(Features::read(client, &gateway.id))
        .await?
        .map_err(|e| {
            Failure::new(
                format!("edge gateway {}: {e}", gateway.name),
                format!(
                    "Ask the provider to enable NSX ALB on edge gateway {} (a service engine group assigned, load balancing on)",
                    gateway.name
                ),
            )
        })?;
    let on_off = |on: bool| if on { "on" } else { "off" };
    let monitors = match (
        client.api_version() >= TENANT_MONITORS_SINCE,
        lb.kube_proxy_health_check,
    ) {
        (true, true) => "on, kube-proxy probed",
        (true, false) => "on",
        (false, true) => "off below API 39.0 (loadbalancer.kubeProxyHealthCheck has no effect)",
        (false, false) => "off below API 39.0",
    };
    let detail = format!(
        "{}enabled, {} feature set{}, transparent mode {}, IPv6 service network {}, tenant health monitors {monitors}",
        if distributed_only {
            "distributed-only gateway (no NAT, no gateway firewall), "
        } else {
            ""
        },
        if features.premium {
            "PREMIUM"
        } else {
            "STANDARD"
        },
        if features.premium {
            " (L4 TLS offered)"
        } else {
            " (no L4 TLS)"
        },
        on_off(features.transparent_mode),
        on_off(features.ipv6_service_network),
    );
    Ok(((), detail))
}

fn describe(assignment: &SegAssignment) -> String {
    let name = assignment
        .service_engine_group_ref
        .name
        .as_deref()
        .unwrap_or(&assignment.service_engine_group_ref.id);
    let deployed = assignment.num_deployed_virtual_services.unwrap_or(0);
    match assignment.max_virtual_services {
        Some(max) => format!("{name} runs {deployed} of {max} virtual services"),
        None => format!("{name} is dedicated to another gateway's use"),
    }
}

async fn engine_group(client: &VcdClient, gateway: &EdgeGateway) -> Step<()> {
    let assignments = bounded(client.service_engine_groups().assignments(&gateway.id))
        .await?
        .map_err(|e| {
            Failure::new(
                e,
                "The role needs Organization vDC Gateway: View Load Balancer",
            )
        })?;
    let fix = format!(
        "Ask the provider to assign a service engine group to edge gateway {} or raise its maxVirtualServices; or delete virtual services no longer needed",
        gateway.name
    );
    if assignments.is_empty() {
        return Err(Failure::new(
            format!(
                "no service engine group is assigned to edge gateway {}",
                gateway.name
            ),
            fix,
        ));
    }
    let described: Vec<String> = assignments.iter().map(describe).collect();
    // The group the load balancer picks: the first with room.
    match assignments.iter().find(|a| a.has_capacity()) {
        Some(group) => Ok(((), describe(group))),
        None => Err(Failure::new(
            format!("no service engine group has room: {}", described.join("; ")),
            fix,
        )),
    }
}

fn count(free: u128) -> String {
    if free >= u128::from(u32::MAX) {
        "more than 4 billion".to_string()
    } else {
        free.to_string()
    }
}

async fn addresses(client: &VcdClient, gateway: &EdgeGateway, lb: &LbConfig) -> Step<()> {
    let mut source = bounded(IpSource::discover(client, gateway, lb.vip_subnet))
        .await?
        .map_err(|e| {
            Failure::new(
                e,
                "The role needs the IP Space rights (see the rights check)",
            )
        })?;
    if let Some(name) = &lb.internal_space {
        bounded(add_private_space(client, &mut source, &gateway.name, name))
            .await?
            .map_err(|e| {
                Failure::new(
                    e,
                    "Name a PRIVATE IP Space of the org in loadbalancer.internal.ipSpace, or give loadbalancer.internal.ranges",
                )
            })?;
    }
    let internal = lb
        .internal_ranges()
        .and_then(|ranges| InternalPools::new(ranges, &source))
        .map_err(|e| {
            Failure::new(
                e,
                "Give internal addresses outside the gateway's external ranges and IP Spaces",
            )
        })?;
    let ((), external) = match &source {
        IpSource::Blocks { .. } => blocks(client, gateway, lb, &source).await,
        IpSource::Spaces(_) => spaces(client, gateway, &source).await,
    }?;
    Ok(match internal.describe() {
        None => ((), external),
        Some(internal) => ((), format!("{external}; internal: {internal}")),
    })
}

async fn blocks(
    client: &VcdClient,
    gateway: &EdgeGateway,
    lb: &LbConfig,
    source: &IpSource,
) -> Step<()> {
    let used = bounded(used_addresses(client, &gateway.id))
        .await?
        .map_err(|e| Failure::new(e, "The role needs Organization vDC Gateway: View"))?;
    let in_use: HashSet<IpAddr> = used.into_iter().map(|(ip, _)| ip).collect();
    let pools = source.address_pools(&in_use);
    let within = lb
        .vip_subnet
        .map(|s| format!(" within loadbalancer.vipSubnet {}-{}", s.first, s.last))
        .unwrap_or_default();
    if pools.is_empty() {
        return Err(Failure::new(
            format!(
                "edge gateway {} has no external IP range{within}",
                gateway.name
            ),
            "Ask the provider to sub-allocate external addresses to the gateway, or widen loadbalancer.vipSubnet",
        ));
    }
    let free: u128 = pools.iter().map(|p| u128::from(p.free_count)).sum();
    let each: Vec<String> = pools
        .iter()
        .map(|p| format!("{}: {} free", p.name, count(u128::from(p.free_count))))
        .collect();
    if free == 0 {
        return Err(Failure::new(
            format!(
                "every address of edge gateway {}'s ranges{within} is in use",
                gateway.name
            ),
            "Free addresses (NAT rules or virtual services no longer needed) or ask the provider to sub-allocate more",
        ));
    }
    Ok(((), format!("IP blocks: {}", each.join(", "))))
}

async fn spaces(client: &VcdClient, gateway: &EdgeGateway, source: &IpSource) -> Step<()> {
    let fix = "Ask the provider for a larger IP Space range or quota, or release floating IPs the org no longer uses";
    if source.spaces().is_empty() {
        return Err(Failure::new(
            format!("no PUBLIC IP Space reaches edge gateway {}", gateway.name),
            "Ask the provider to give the gateway's provider gateway an uplink to a PUBLIC IP Space",
        ));
    }
    let suggestions = bounded(client.ip_spaces().floating_ip_suggestions(&gateway.id))
        .await?
        .map_err(|e| Failure::new(e, fix))?;
    // Without VCD's utilization, the size of the space's ranges.
    let sizes = source.address_pools(&HashSet::new());
    let mut each = Vec::new();
    let mut total: u128 = 0;
    for space in source.spaces() {
        let read = bounded(client.ip_spaces().get(&space.id))
            .await?
            .map_err(|e| Failure::new(e, fix))?;
        let unallocated = read
            .utilization
            .and_then(|u| u.floating_ips)
            .and_then(|f| f.unallocated())
            .or_else(|| {
                sizes
                    .iter()
                    .find(|p| p.name == space.name)
                    .map(|p| u128::from(p.free_count))
            })
            .unwrap_or(0);
        let unused = suggestions
            .iter()
            .filter(|s| s.ip_space_ref.id == space.id)
            .map(|s| s.unused_values.len() as u128)
            .sum::<u128>();
        total = total.saturating_add(unallocated + unused);
        each.push(format!(
            "{}: {} to allocate, {unused} allocated and unused",
            space.name,
            count(unallocated)
        ));
    }
    if total == 0 {
        return Err(Failure::new(
            format!(
                "no address left in the IP Spaces of edge gateway {}: {}",
                gateway.name,
                each.join("; ")
            ),
            fix,
        ));
    }
    Ok(((), format!("IP Spaces: {}", each.join("; "))))
}

async fn certificate(client: &VcdClient, lb: &LbConfig) -> Step<()> {
    let alias = lb.effective_cert_alias();
    let found = bounded(client.certificates().find(&alias))
        .await?
        .map_err(|e| Failure::new(e, "The role needs Certificate Library: View"))?;
    match (found, &lb.cert_alias) {
        (Some(item), _) => Ok(((), format!("{} is in the org's library", item.alias))),
        (None, Some(_)) => Err(Failure::new(
            format!("certAlias {alias} is not in the org's certificate library"),
            "Add the certificate to the org's library under that alias (Certificate Management), or correct loadbalancer.certAlias",
        )),
        (None, None) => Ok((
            (),
            format!(
                "certAlias is not set and {alias} is not in the library: only Services that name their own certificate terminate TLS"
            ),
        )),
    }
}

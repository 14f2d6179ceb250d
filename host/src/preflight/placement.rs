//! Where the cluster lives: the org, the VDC, `loadbalancer.network` and
//! the edge gateway it is routed through, found with the same calls (and
//! in the same order) as the load balancer's `Tenancy::placement`.

use super::findings::{CheckId, Failure, Report, Step, bounded};
use crate::lb::LbConfig;
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::gateway::EdgeGateway;
use crate::vcd::resources::network::OrgVdcNetwork;
use crate::vcd::{VcdClient, VcdError};

/// What the placement checks found.
#[derive(Default)]
pub(super) struct Found {
    pub org: Option<EntityRef>,
    pub vdc: Option<EntityRef>,
    pub gateway: Option<EdgeGateway>,
}

fn shown(reference: &EntityRef) -> &str {
    reference.name.as_deref().unwrap_or(&reference.id)
}

/// The org, VDC, network and gateway checks; `load_balancers` false skips
/// the network and its gateway, which only the load balancer uses.
pub(super) async fn check(
    client: &VcdClient,
    lb: &LbConfig,
    load_balancers: bool,
    report: &mut Report,
) -> Found {
    let mut found = Found::default();
    let Some(org) = report.record(CheckId::Org, org(client).await) else {
        report.skip(
            &[CheckId::Vdc, CheckId::Network, CheckId::Gateway],
            "needs the org",
        );
        return found;
    };
    found.org = Some(org.clone());
    let Some(vdc) = report.record(CheckId::Vdc, vdc(client, &org, &lb.vdc).await) else {
        report.skip(&[CheckId::Network, CheckId::Gateway], "needs the VDC");
        return found;
    };
    found.vdc = Some(vdc.clone());
    if !load_balancers {
        report.skip(
            &[CheckId::Network, CheckId::Gateway],
            "loadbalancer.enabled is false: no load balancers",
        );
        return found;
    }
    let Some(network) = report.record(CheckId::Network, network(client, &vdc, &lb.network).await)
    else {
        report.skip(&[CheckId::Gateway], "needs the network");
        return found;
    };
    found.gateway = report.record(CheckId::Gateway, gateway(client, &network).await);
    found
}

fn failed(error: &VcdError, fix: &str) -> Failure {
    Failure::new(error, fix)
}

async fn org(client: &VcdClient) -> Step<EntityRef> {
    let name = client.config().org.clone();
    let org = bounded(client.tenancy().org(&name))
        .await?
        .map_err(|e| failed(&e, &format!(
            "Set vcd.org to the org the cluster lives in (now {name:?}); the user must belong to it, or be a System administrator"
        )))?;
    let detail = format!("{} ({})", shown(&org), org.id);
    Ok((org, detail))
}

async fn vdc(client: &VcdClient, org: &EntityRef, name: &str) -> Step<EntityRef> {
    let vdc = bounded(client.tenancy().vdc(org, name))
        .await?
        .map_err(|e| {
            failed(
                &e,
                &format!(
                    "Set vcd.vdc to a VDC of org {} (its name or urn:vcloud:vdc:…)",
                    shown(org)
                ),
            )
        })?;
    let detail = format!("{} ({})", shown(&vdc), vdc.id);
    Ok((vdc, detail))
}

async fn network(client: &VcdClient, vdc: &EntityRef, name: &str) -> Step<OrgVdcNetwork> {
    let fix = format!(
        "Set loadbalancer.network to an NSX-T org VDC network of VDC {} routed through the edge gateway that hosts the load balancers",
        shown(vdc)
    );
    let network = bounded(client.tenancy().network(vdc, name))
        .await?
        .map_err(|e| failed(&e, &fix))?;
    let backing = network.backing_network_type.clone().unwrap_or_default();
    if !backing.is_empty() && !network.is_nsxt() {
        return Err(Failure::new(
            format!("network {name} is backed by {backing}; NSX ALB serves NSX-T segments only"),
            fix,
        ));
    }
    let Some(gateway) = network.gateway() else {
        return Err(Failure::new(
            format!("network {name} is not routed through an edge gateway"),
            fix,
        ));
    };
    let detail = format!("{name} ({backing}), routed through {}", shown(gateway));
    Ok((network, detail))
}

async fn gateway(client: &VcdClient, network: &OrgVdcNetwork) -> Step<EdgeGateway> {
    let Some(reference) = network.gateway() else {
        return Err(Failure::new(
            format!("network {} has no edge gateway", network.name),
            "Route the network through an edge gateway",
        ));
    };
    let gateway = bounded(client.gateways().get(&reference.id))
        .await?
        .map_err(|e| {
            failed(
                &e,
                "The org must own the network's edge gateway and the user see it (Organization vDC Gateway: View)",
            )
        })?;
    let source = if gateway.uses_ip_spaces() {
        "addresses from IP Spaces"
    } else {
        "addresses from IP blocks"
    };
    let status = gateway.status.as_deref().unwrap_or("status unknown");
    let detail = format!("{} ({}), {status}, {source}", gateway.name, gateway.id);
    Ok((gateway, detail))
}

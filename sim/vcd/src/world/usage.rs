//! Derived state: which external IPs a gateway uses, how an IP Space
//! allocation is used, how many virtual services sit on a SEG assignment.

use std::net::IpAddr;

use super::alb::Pool;
use super::ip::parse_ip;
use super::ip_space::{ClaimedUsage, IpAllocation};
use super::network::EdgeGateway;
use super::{Ref, World, find};

/// One entry of `usedIpAddresses`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsedIp {
    pub ip: IpAddr,
    /// `PRIMARY_IP`, `DNAT`, `SNAT` or `Load_Balancer`.
    pub category: &'static str,
}

/// How an IP Space allocation is used right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocationUse {
    /// `UNUSED`, `USED` or `USED_MANUAL` (a client claim wins).
    pub state: &'static str,
    pub used_by: Option<Ref>,
    pub categories: Vec<&'static str>,
}

impl World {
    /// True when `ip` is an external address of the gateway: inside its
    /// sub-allocated ranges or inside an IP Space it reaches.
    pub fn is_external_ip(&self, gateway: &EdgeGateway, ip: IpAddr) -> bool {
        gateway.external_ranges().any(|r| r.contains(ip))
            || gateway
                .ip_space_ids
                .iter()
                .filter_map(|id| find(&self.ip_spaces, id))
                .any(|space| space.contains(ip))
    }

    /// The primary IPs, NAT external addresses and external VIPs (IPv4,
    /// then IPv6, per virtual service) of a gateway, in that order, without
    /// duplicates.
    pub fn used_ips(&self, gateway_id: &str) -> Vec<UsedIp> {
        let Some(gateway) = find(&self.gateways, gateway_id) else {
            return Vec::new();
        };
        let mut used: Vec<UsedIp> = gateway
            .primary_ips()
            .map(|ip| UsedIp {
                ip,
                category: "PRIMARY_IP",
            })
            .collect();
        let nat = self
            .nat_rules
            .iter()
            .filter(|r| r.gateway_id == gateway.id)
            .filter_map(|r| {
                let category = match r.body.kind() {
                    "SNAT" => "SNAT",
                    "DNAT" | "REFLEXIVE" => "DNAT",
                    _ => return None,
                };
                let ip = parse_ip(&r.body.external_addresses).ok()?;
                Some(UsedIp { ip, category })
            });
        let vips = self
            .virtual_services
            .iter()
            .filter(|vs| vs.gateway_ref.id == gateway.id)
            .flat_map(|vs| [&vs.virtual_ip_address, &vs.ipv6_virtual_ip_address])
            .filter_map(|vip| parse_ip(vip.as_deref()?).ok())
            .filter(|ip| self.is_external_ip(gateway, *ip))
            .map(|ip| UsedIp {
                ip,
                category: "Load_Balancer",
            });
        for entry in nat.chain(vips) {
            if !used.contains(&entry) {
                used.push(entry);
            }
        }
        used
    }

    pub fn allocation_use(&self, allocation: &IpAllocation) -> AllocationUse {
        let users = self.gateways.iter().filter(|g| {
            g.org_id == allocation.org_id && g.ip_space_ids.contains(&allocation.space_id)
        });
        let mut used_by = None;
        let mut categories = Vec::new();
        for gateway in users {
            for entry in self.used_ips(&gateway.id) {
                if entry.ip != allocation.value {
                    continue;
                }
                used_by.get_or_insert_with(|| Ref::new(&gateway.name, &gateway.id));
                let category = match entry.category {
                    "Load_Balancer" => "LOAD_BALANCER",
                    other => other,
                };
                if !categories.contains(&category) {
                    categories.push(category);
                }
            }
        }
        let state = match (&allocation.claimed, &used_by) {
            (ClaimedUsage::UsedManual, _) => "USED_MANUAL",
            (ClaimedUsage::Unused, Some(_)) => "USED",
            (ClaimedUsage::Unused, None) => "UNUSED",
        };
        AllocationUse {
            state,
            used_by,
            categories,
        }
    }

    /// Virtual services deployed on a SEG for one gateway.
    pub fn deployed_virtual_services(&self, seg_id: &str, gateway_id: &str) -> usize {
        self.virtual_services
            .iter()
            .filter(|vs| {
                vs.service_engine_group_ref.id == seg_id && vs.gateway_ref.id == gateway_id
            })
            .count()
    }

    /// Allocations of one org in one space.
    pub fn org_allocations<'a>(
        &'a self,
        space_id: &'a str,
        org_id: &'a str,
    ) -> impl Iterator<Item = &'a IpAllocation> {
        self.ip_allocations
            .iter()
            .filter(move |a| a.space_id == space_id && a.org_id == org_id)
    }

    /// The addresses a pool sends traffic to: its members, or the entries
    /// of its member group.
    pub fn pool_member_ips(&self, pool: &Pool) -> Vec<String> {
        match &pool.member_group_ref {
            Some(group) => find(&self.firewall_groups, &group.id)
                .and_then(|g| g.body.ip_addresses.clone())
                .unwrap_or_default(),
            None => pool.members.iter().map(|m| m.ip_address.clone()).collect(),
        }
    }
}

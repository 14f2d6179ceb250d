//! Observe: one read per object family of the gateway (virtual services,
//! pools and NAT rules), kept in the gateway snapshot, then the objects of
//! one Service picked out by ownership tag.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use crate::lb::newer_format::NewerObject;
use crate::lb::ownership::{OwnerTag, Tagged};
use crate::vcd::VcdClient;
use crate::vcd::VcdError;
use crate::vcd::resources::nat::NatRule;
use crate::vcd::resources::pool::PoolSummary;
use crate::vcd::resources::virtual_service::VirtualServiceSummary;

/// Everything of the families we manage on the gateway, whoever owns it.
#[derive(Debug, Clone, Default)]
pub struct GatewayView {
    pub virtual_services: Vec<VirtualServiceSummary>,
    pub pools: Vec<PoolSummary>,
    pub nat_rules: Vec<NatRule>,
    /// The gateway's used external addresses (`usedIpAddresses`: its own,
    /// SNAT, VPN, load balancers) with their category, as last read.
    pub used_ips: Vec<(IpAddr, String)>,
}

/// An observed object with its parsed tag.
#[derive(Debug, Clone)]
pub struct Owned<T> {
    pub object: T,
    pub tag: Tagged,
}

/// The objects one Service owns, by name.
#[derive(Debug, Clone, Default)]
pub struct ServiceObjects {
    pub virtual_services: BTreeMap<String, Owned<VirtualServiceSummary>>,
    pub pools: BTreeMap<String, Owned<PoolSummary>>,
    pub nat_rules: BTreeMap<String, Owned<NatRule>>,
}

/// A virtual service's VIPs as written: IPv4, then IPv6.
pub fn vips_of(vs: &VirtualServiceSummary) -> impl Iterator<Item = &str> {
    let v4 = vs.virtual_ip_address.as_deref();
    v4.into_iter().chain(vs.ipv6_virtual_ip_address.as_deref())
}

fn tag_of(description: Option<&str>) -> Option<Tagged> {
    description.and_then(OwnerTag::parse)
}

/// The items tagged for `owner`'s Service, by name; `identity` gives an item's
/// name and description.
fn owned<T: Clone>(
    items: &[T],
    owner: &OwnerTag,
    identity: impl Fn(&T) -> (&String, Option<&str>),
) -> BTreeMap<String, Owned<T>> {
    items
        .iter()
        .filter_map(|item| {
            let (name, description) = identity(item);
            let tag = tag_of(description).filter(|t| t.owner.same_service(owner))?;
            Some((
                name.clone(),
                Owned {
                    object: item.clone(),
                    tag,
                },
            ))
        })
        .collect()
}

impl GatewayView {
    /// Everything on the gateway; NAT rules only `with_nat` (a
    /// distributed-only gateway refuses to list them).
    pub async fn read(
        client: &VcdClient,
        gateway_id: &str,
        with_nat: bool,
    ) -> Result<Self, VcdError> {
        let virtual_services = client.virtual_services().summaries(gateway_id).await?;
        let pools = client.pools().summaries(gateway_id).await?;
        let nat_rules = match with_nat {
            true => client.nat_rules().list(gateway_id).await?,
            false => Vec::new(),
        };
        let used_ips = crate::lb::observe::ipam::used_addresses(client, gateway_id).await?;
        Ok(Self {
            virtual_services,
            pools,
            nat_rules,
            used_ips,
        })
    }

    /// Only the holders of `addresses`: the virtual services at them (one
    /// filtered read), and the NAT rules if asked (all of them).
    pub async fn read_holders(
        client: &VcdClient,
        gateway_id: &str,
        addresses: &[String],
        with_nat: bool,
    ) -> Result<Self, VcdError> {
        let virtual_services = client.virtual_services().at(gateway_id, addresses).await?;
        let nat_rules = if with_nat {
            client.nat_rules().list(gateway_id).await?
        } else {
            Vec::new()
        };
        Ok(Self {
            virtual_services,
            pools: Vec::new(),
            nat_rules,
            used_ips: Vec::new(),
        })
    }

    /// The descriptions of the virtual services, pools and NAT rules: the
    /// ownership tags the sweep reads.
    pub fn descriptions(&self) -> impl Iterator<Item = Option<&str>> {
        self.virtual_services
            .iter()
            .map(|v| v.description.as_deref())
            .chain(self.pools.iter().map(|p| p.description.as_deref()))
            .chain(self.nat_rules.iter().map(|r| r.description.as_deref()))
    }

    /// The objects whose tag names `owner`'s cluster and Service uid.
    pub fn owned_by(&self, owner: &OwnerTag) -> ServiceObjects {
        ServiceObjects {
            virtual_services: owned(&self.virtual_services, owner, |vs| {
                (&vs.name, vs.description.as_deref())
            }),
            pools: owned(&self.pools, owner, |pool| {
                (&pool.name, pool.description.as_deref())
            }),
            nat_rules: owned(&self.nat_rules, owner, |rule| {
                (&rule.name, rule.description.as_deref())
            }),
        }
    }

    /// The objects whose tag is of a newer format than this version knows.
    pub fn newer_objects(&self) -> Vec<NewerObject> {
        let vs = self.virtual_services.iter().filter_map(|vs| {
            NewerObject::of("virtual_service", &vs.name, vs.description.as_deref())
        });
        let pools = self
            .pools
            .iter()
            .filter_map(|p| NewerObject::of("pool", &p.name, p.description.as_deref()));
        let nat = self
            .nat_rules
            .iter()
            .filter_map(|r| NewerObject::of("nat_rule", &r.name, r.description.as_deref()));
        vs.chain(pools).chain(nat).collect()
    }

    /// Every address a virtual service or NAT rule on the gateway uses.
    pub fn addresses_in_use(&self) -> Vec<IpAddr> {
        let vips = self.virtual_services.iter().flat_map(vips_of);
        let nat = self
            .nat_rules
            .iter()
            .map(|rule| rule.external_addresses.as_str());
        vips.chain(nat).filter_map(|ip| ip.parse().ok()).collect()
    }

    /// The VIPs and NAT external addresses of tagged objects, with their
    /// owners.
    pub fn tagged_addresses(&self) -> impl Iterator<Item = (IpAddr, OwnerTag)> + '_ {
        let vips = self
            .virtual_services
            .iter()
            .flat_map(|vs| vips_of(vs).map(|ip| (Some(ip), vs.description.as_deref())));
        let nat = self.nat_rules.iter().map(|rule| {
            (
                Some(rule.external_addresses.as_str()),
                rule.description.as_deref(),
            )
        });
        vips.chain(nat)
            .filter_map(|(ip, description)| Some((ip?.parse().ok()?, tag_of(description)?.owner)))
    }

    /// Every address in use on the gateway with why: as `usedIpAddresses`
    /// last said, and the VIPs and NAT addresses written since.
    pub fn used_addresses(&self) -> Vec<(IpAddr, String)> {
        let mut used = self.used_ips.clone();
        used.extend(
            self.addresses_in_use()
                .into_iter()
                .map(|ip| (ip, "LOAD_BALANCER".to_string())),
        );
        used
    }

    /// Whether another Service of `owner`'s cluster, not sharing with it,
    /// holds `ip`: after a Service leaves a sharing group, it and its former
    /// sharers are two owners of one address, even where an IP Space claim
    /// names only one of them.
    pub fn held_by_another_service(&self, ip: IpAddr, owner: &OwnerTag) -> bool {
        self.tagged_addresses().any(|(at, tagged)| {
            at == ip
                && tagged.cluster_id == owner.cluster_id
                && tagged.identity.is_some()
                && tagged.identity == owner.identity
                && !tagged.same_service(owner)
                && !tagged.same_group(owner)
        })
    }

    /// Who else holds `ip` as a VIP or NAT external address, if anyone.
    pub fn other_holder(&self, ip: &str, owner: &OwnerTag) -> Option<String> {
        // A Service with the same sharing key is a sharer, not a holder.
        let foreign = |d: Option<&str>| {
            !tag_of(d).is_some_and(|t| t.owner.same_service(owner) || t.owner.same_group(owner))
        };
        let vs = self
            .virtual_services
            .iter()
            .find(|vs| vips_of(vs).any(|vip| vip == ip) && foreign(vs.description.as_deref()));
        if let Some(vs) = vs {
            return Some(crate::lb::ownership::describe_holder(
                vs.description.as_deref(),
                &format!("virtual service {}", vs.name),
            ));
        }
        self.nat_rules
            .iter()
            .find(|r| r.external_addresses == ip && foreign(r.description.as_deref()))
            .map(|r| {
                crate::lb::ownership::describe_holder(
                    r.description.as_deref(),
                    &format!("NAT rule {}", r.name),
                )
            })
    }
}

impl ServiceObjects {
    pub fn is_empty(&self) -> bool {
        self.virtual_services.is_empty() && self.pools.is_empty() && self.nat_rules.is_empty()
    }

    /// The library items the virtual services terminate TLS with.
    pub fn certificate_ids(&self) -> BTreeSet<String> {
        self.virtual_services
            .values()
            .filter_map(|v| v.object.certificate_ref.as_ref().map(|r| r.id.clone()))
            .collect()
    }

    /// Every external address the objects use, whatever the current mode
    /// (a mode change finds what the previous one made): the DNAT rules'
    /// external addresses when the Service has DNAT rules, else the
    /// virtual services' VIPs that `is_external` accepts (one-arm VIPs are
    /// internal, and a change cut short may leave them without DNAT).
    pub fn external_ips(&self, is_external: impl Fn(IpAddr) -> bool) -> Vec<IpAddr> {
        let parse = |ip: &str| ip.parse::<IpAddr>().ok();
        let mut ips: Vec<IpAddr> = match self.nat_rules.is_empty() {
            false => self
                .nat_rules
                .values()
                .filter_map(|r| parse(&r.object.external_addresses))
                .collect(),
            true => self
                .virtual_services
                .values()
                .flat_map(|v| vips_of(&v.object))
                .filter_map(parse)
                .filter(|ip| is_external(*ip))
                .collect(),
        };
        ips.sort();
        ips.dedup();
        ips
    }

    /// Whether any object's tag is of an older format (without the cluster
    /// identity or the format number): its claims are rewritten too.
    pub fn predates_format(&self) -> bool {
        let vs = self.virtual_services.values().map(|o| &o.tag);
        let pools = self.pools.values().map(|o| &o.tag);
        let nat = self.nat_rules.values().map(|o| &o.tag);
        vs.chain(pools).chain(nat).any(Tagged::predates_format)
    }
}

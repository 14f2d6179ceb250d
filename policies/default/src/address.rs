//! The address decision: the address of the Service's sharing group (in
//! its namespace, or another where the provider allows it), requested address, requested pool, current address, or the
//! first pool with room of the Service's IP families, in their order.
//! Every pool but a sharing group's is external or internal, and a Service
//! takes one of the kind `vcd-ccm.io/internal` asks for.

use std::net::IpAddr;

use crate::annotations::{ADDRESS_POOL, Annotations, INTERNAL, RETAIN_ADDRESS, SHARING_KEY};
use crate::config::Config;
use crate::ip::{family, family_name, from_std, in_range, to_std};
use crate::read::invalid;
use crate::vcd::lb_policy::types::{
    AddressChoice, AddressPool, DecisionError, DecisionInput, InvalidField, IpFamily,
};

/// The host offers sharing groups as pools with this prefix: the default
/// policy takes its own namespace's by the key, and no other.
const SHARING_POOLS: &str = "sharing-key/";

/// The pools of the gateway, without the sharing groups'.
fn ordinary(input: &DecisionInput) -> impl Iterator<Item = &AddressPool> {
    input
        .pools
        .iter()
        .filter(|pool| !pool.name.starts_with(SHARING_POOLS))
}

/// The gateway's pools of the kind the Service asks for.
fn of_kind(input: &DecisionInput, internal: bool) -> impl Iterator<Item = &AddressPool> {
    ordinary(input).filter(move |pool| pool.external != internal)
}

/// The word for a pool's kind, in messages.
fn kind(internal: bool) -> &'static str {
    if internal { "internal" } else { "external" }
}

/// The sharing group to join: the namespace's own, else, where the
/// provider allows it, the first other namespace's with the key.
fn group<'a>(input: &'a DecisionInput, config: &Config, key: &str) -> Option<&'a AddressPool> {
    let own = format!("{SHARING_POOLS}{}/{key}", input.service.namespace);
    let suffix = format!("/{key}");
    let mut groups = input
        .pools
        .iter()
        .filter(|pool| pool.name.starts_with(SHARING_POOLS));
    groups.clone().find(|pool| pool.name == own).or_else(|| {
        groups.find(|pool| config.share_across_namespaces && pool.name.ends_with(&suffix))
    })
}

pub fn decide(
    input: &DecisionInput,
    config: &Config,
    annotations: &Annotations,
) -> Result<AddressChoice, DecisionError> {
    let internal = annotations.internal;
    if internal && annotations.sharing_key.is_some() {
        return Err(invalid(
            INTERNAL,
            format!(
                "cannot be combined with {SHARING_KEY}: Services share external addresses only; remove one of the two annotations"
            ),
        ));
    }
    if let Some(key) = &annotations.sharing_key
        && let Some(group) = group(input, config, key)
    {
        return share(input, annotations, key, group);
    }
    if internal && of_kind(input, true).next().is_none() {
        return Err(invalid(
            INTERNAL,
            "this cluster offers no internal addresses (the provider sets them in the cloud config, loadbalancer.internal, or runs one-arm mode); remove the annotation".into(),
        ));
    }
    let families = &input.service.ip_families;
    let requested_pool = match &annotations.address_pool {
        Some(name) => Some(find_pool(input, name)?),
        None => None,
    };
    if let Some(pool) = requested_pool
        && pool.external == internal
    {
        return Err(invalid(
            ADDRESS_POOL,
            format!(
                "pool {:?} is {}, but the Service asks for an {} address ({INTERNAL} {internal}); name an {} pool",
                pool.name,
                kind(!internal),
                kind(internal),
                kind(internal)
            ),
        ));
    }
    if let Some(pool) = requested_pool
        && let Some(offered) = pool_family(pool)
        && !families.is_empty()
        && !families.contains(&offered)
    {
        return Err(DecisionError::InvalidAnnotation(InvalidField {
            key: ADDRESS_POOL.into(),
            message: format!(
                "pool {:?} offers {} addresses but the Service's ipFamilies are {:?}",
                pool.name,
                family_name(offered),
                families.iter().map(|f| family_name(*f)).collect::<Vec<_>>()
            ),
        }));
    }
    if let Some((ip, key)) = annotations.requested_ip {
        if !families.is_empty() && !families.contains(&family(ip)) {
            let wanted: Vec<&str> = families.iter().map(|f| family_name(*f)).collect();
            return Err(DecisionError::InvalidAnnotation(InvalidField {
                key: key.into(),
                message: format!(
                    "{ip} is an {} address but the Service's ipFamilies are {wanted:?}",
                    family_name(family(ip))
                ),
            }));
        }
        let mut candidates = requested_pool
            .into_iter()
            .chain(of_kind(input, internal).filter(|_| requested_pool.is_none()));
        if candidates.any(|pool| contains(pool, ip)) {
            return Ok(AddressChoice::Specific(from_std(ip)));
        }
        if requested_pool.is_none() && of_kind(input, !internal).any(|pool| contains(pool, ip)) {
            return Err(invalid(
                key,
                format!(
                    "{ip} is an {} address, but the Service asks for an {} one ({INTERNAL} {internal}); request an address of that kind or change {INTERNAL}",
                    kind(!internal),
                    kind(internal)
                ),
            ));
        }
        return Err(DecisionError::RequestedAddressUnavailable(from_std(ip)));
    }
    let current = input.current.as_ref().and_then(|c| match &c.address {
        AddressChoice::Specific(address) => Some(to_std(address)),
        _ => None,
    });
    if let Some(pool) = requested_pool {
        return match current {
            Some(ip) if contains(pool, ip) => Ok(AddressChoice::KeepCurrent),
            _ if pool.free_count == 0 => Err(DecisionError::NoAddressAvailable),
            _ => Ok(AddressChoice::FromPool(pool.name.clone())),
        };
    }
    // A current address of the other kind is left: the Service moves.
    let other_kind = |ip: IpAddr| of_kind(input, !internal).any(|pool| contains(pool, ip));
    if current.is_some_and(|ip| !other_kind(ip)) {
        return Ok(AddressChoice::KeepCurrent);
    }
    // An address kept when a Service of this namespace and name was
    // deleted comes back to it.
    let first_family = families.first().copied().unwrap_or(IpFamily::Ipv4);
    let kept = input.retained.iter().map(to_std).find(|ip| {
        family(*ip) == first_family && of_kind(input, internal).any(|pool| contains(pool, *ip))
    });
    if let Some(ip) = kept {
        return Ok(AddressChoice::Specific(from_std(ip)));
    }
    let wanted: &[IpFamily] = if families.is_empty() {
        &[IpFamily::Ipv4]
    } else {
        families
    };
    let mut of_families = wanted
        .iter()
        .flat_map(|family| {
            of_kind(input, internal).filter(move |pool| pool_family(pool) == Some(*family))
        })
        .peekable();
    if of_families.peek().is_none() {
        return Err(DecisionError::UnsupportedIpFamily(wanted[0]));
    }
    of_families
        .find(|pool| pool.free_count > 0)
        .map(|pool| AddressChoice::FromPool(pool.name.clone()))
        .ok_or(DecisionError::NoAddressAvailable)
}

/// Whether the address outlives the Service (`vcd-ccm.io/retain-address`):
/// only an IP Space allocation can, and not one a sharing group holds.
pub fn retain(input: &DecisionInput, annotations: &Annotations) -> Result<bool, DecisionError> {
    if !annotations.retain_address {
        return Ok(false);
    }
    if !input.cluster.capabilities.retained_addresses {
        return Err(invalid(
            RETAIN_ADDRESS,
            "an address can outlive its Service only where it is an IP Space allocation, and this gateway's addresses come from IP blocks (capabilities.retained-addresses is false); remove the annotation".into(),
        ));
    }
    let conflict = match (annotations.internal, &annotations.sharing_key) {
        (true, _) => Some(format!(
            "{INTERNAL}: an internal address is no IP Space allocation"
        )),
        (false, Some(_)) => Some(format!(
            "{SHARING_KEY}: a shared address lives as long as its last sharer"
        )),
        (false, None) => None,
    };
    match conflict {
        Some(why) => Err(invalid(
            RETAIN_ADDRESS,
            format!("cannot be combined with {why}; remove one of the two annotations"),
        )),
        None => Ok(true),
    }
}

/// Joins the group's address, unless the Service asks for another one.
fn share(
    input: &DecisionInput,
    annotations: &Annotations,
    key: &str,
    group: &AddressPool,
) -> Result<AddressChoice, DecisionError> {
    let Some(ip) = group.ranges.first().map(|range| to_std(&range.first)) else {
        return Err(DecisionError::Other(format!(
            "sharing pool {} has no address",
            group.name
        )));
    };
    let conflict = |field: &str, asked: String| {
        DecisionError::InvalidAnnotation(InvalidField {
            key: field.into(),
            message: format!(
                "{asked}, but Services with {SHARING_KEY} {key:?} share {ip} ({}): ask for {ip}, or remove one of the two annotations",
                group.name
            ),
        })
    };
    if let Some((requested, field)) = annotations.requested_ip
        && requested != ip
    {
        return Err(conflict(field, format!("the Service asks for {requested}")));
    }
    if let Some(name) = &annotations.address_pool
        && !find_pool(input, name).is_ok_and(|pool| contains(pool, ip))
    {
        return Err(conflict(
            ADDRESS_POOL,
            format!("the Service asks for pool {name:?}"),
        ));
    }
    let families = &input.service.ip_families;
    if !families.is_empty() && !families.contains(&family(ip)) {
        return Err(conflict(
            SHARING_KEY,
            format!(
                "the Service's ipFamilies exclude {}",
                family_name(family(ip))
            ),
        ));
    }
    Ok(AddressChoice::FromPool(group.name.clone()))
}

fn find_pool<'a>(input: &'a DecisionInput, name: &str) -> Result<&'a AddressPool, DecisionError> {
    ordinary(input)
        .find(|pool| pool.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = ordinary(input).map(|pool| pool.name.as_str()).collect();
            DecisionError::InvalidAnnotation(InvalidField {
                key: ADDRESS_POOL.into(),
                message: format!("no address pool named {name:?}; this Service may use {names:?}"),
            })
        })
}

fn contains(pool: &AddressPool, ip: IpAddr) -> bool {
    pool.ranges.iter().any(|range| in_range(ip, range))
}

fn pool_family(pool: &AddressPool) -> Option<IpFamily> {
    pool.ranges
        .first()
        .map(|range| family(to_std(&range.first)))
}

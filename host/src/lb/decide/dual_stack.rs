//! The families a Service's addresses may have here, and its second
//! address when `spec.ipFamilyPolicy` asks for two.
//!
//! IPv6 needs VCD API 37.0 (`ipv6VirtualIpAddress`), an IPv6 service
//! network on the gateway's load balancer, and for external addresses a
//! mode without NAT: DNAT rules and the one-arm internal range are IPv4
//! (internal addresses take no DNAT rule). A Service that
//! requires both families and cannot have them is refused before any
//! write; one that prefers both is served with one and told why.

use std::net::IpAddr;

use crate::lb::context::Context;
use crate::lb::decide::address::{Address, AddressContext, Resolved, SpaceClaim};
use crate::lb::decide::sharing::SHARING_KEY_ANNOTATION;
use crate::lb::errors::LbError;
use crate::lb::ownership::OwnerTag;
use crate::lb::ranges::{family_name, family_of, other_family};
use crate::lb::service::{FamilyPolicy, ServiceSpec};
use crate::policy::model::IpFamily;
use crate::vcd::ApiVersion;

/// The first API version with `ipv6VirtualIpAddress`.
const IPV6_VIPS: ApiVersion = ApiVersion::new(37, 0);

/// The Service's second address, or why it has none.
pub enum Second {
    /// It asks for one family.
    NotAsked,
    Served(Address),
    /// Below API 37.2 the IP Space picks it: allocated first.
    AllocateFirst(SpaceClaim),
    /// It prefers two and gets one: the Warning's message.
    NotServed(String),
}

/// Why addresses of `family` (internal ones or external) cannot be
/// served here, if they cannot.
pub(in crate::lb) fn family_unavailable(
    ctx: &Context,
    family: IpFamily,
    internal: bool,
) -> Option<String> {
    if family == IpFamily::Ipv4 {
        return None;
    }
    if ctx.mode.uses_nat() && !internal {
        return Some("one-arm mode translates IPv4 only (DNAT rules and the loadbalancer.oneArm range are IPv4)".to_string());
    }
    let version = ctx.client.api_version();
    if version < IPV6_VIPS {
        return Some(format!(
            "VCD API {version} has no IPv6 virtual service addresses (ipv6VirtualIpAddress needs API {IPV6_VIPS})"
        ));
    }
    (!ctx.features.ipv6_service_network).then(|| {
        "the gateway's load balancer has no IPv6 service network (ipv6ServiceNetworkDefinition, set by the provider in the edge gateway's load balancer settings)".to_string()
    })
}

/// Refuses the policy's address when its family cannot be served.
pub(in crate::lb) fn check_family(
    ctx: &Context,
    service: &ServiceSpec,
    ip: IpAddr,
) -> Result<(), LbError> {
    let internal = ctx.is_internal(ip);
    match family_unavailable(ctx, family_of(ip), internal) {
        None => Ok(()),
        Some(reason) => Err(LbError::InvalidService {
            service: service.key(),
            problem: format!("address {ip}: {reason}; set ipFamilies to [IPv4]"),
        }),
    }
}

/// The Service's address of the family `first` is not, when its
/// `ipFamilyPolicy` asks for both.
pub(in crate::lb) async fn second_address(
    ctx: &Context,
    service: &ServiceSpec,
    context: &AddressContext<'_>,
    owner: &OwnerTag,
    first: IpAddr,
) -> Result<Second, LbError> {
    let policy = service.ip_family_policy;
    if policy == FamilyPolicy::SingleStack {
        return Ok(Second::NotAsked);
    }
    let family = other_family(family_of(first));
    let unserved = |reason: String| match policy {
        FamilyPolicy::RequireDualStack => Err(LbError::InvalidService {
            service: service.key(),
            problem: format!(
                "spec.ipFamilyPolicy RequireDualStack cannot be met: no {} address: {reason}; set ipFamilyPolicy to PreferDualStack or SingleStack",
                family_name(family)
            ),
        }),
        _ => Ok(Second::NotServed(format!(
            "spec.ipFamilyPolicy {}: the load balancer has its {} address {first} only: {reason}",
            policy.as_str(),
            family_name(family_of(first)),
        ))),
    };
    if owner.share.is_some() {
        return unserved(format!(
            "Services with {SHARING_KEY_ANNOTATION} share one address"
        ));
    }
    let internal = ctx.is_internal(first);
    let (no_pool, pools) = match internal {
        true => (
            format!(
                "no internal {} range is configured (loadbalancer.internal.ranges)",
                family_name(family)
            ),
            ctx.internal.pool_of_family(family).into_iter().collect(),
        ),
        false => (
            format!("the gateway offers no {} addresses", family_name(family)),
            ctx.source.pools_of(family),
        ),
    };
    if pools.is_empty() {
        return unserved(no_pool);
    }
    if let Some(reason) = family_unavailable(ctx, family, internal) {
        return unserved(reason);
    }
    match context.resolve_second(family, internal).await {
        Ok(Some(Resolved::Ready(address))) => Ok(Second::Served(address)),
        Ok(Some(Resolved::AllocateFirst(claim))) => Ok(Second::AllocateFirst(claim)),
        Ok(None) => unserved(no_pool),
        Err(error @ LbError::PoolExhausted { .. }) => match policy {
            FamilyPolicy::RequireDualStack => Err(error),
            _ => unserved(error.to_string()),
        },
        Err(error) => Err(error),
    }
}

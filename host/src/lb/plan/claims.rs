//! The writes of IP Space claims that follow a Service's objects: the
//! release of claims a move or a delete leaves (or their passing on to a
//! Service sharing the address), and the rewrite of claims written in an
//! older tag format.

use std::collections::HashSet;

use crate::lb::decide::address::SpaceClaim;
use crate::lb::decide::allocations::find_claims;
use crate::lb::decide::sharing;
use crate::lb::errors::LbError;
use crate::lb::observe::ipam::Space;
use crate::lb::observe::objects::GatewayView;
use crate::lb::ownership::OwnerTag;
use crate::lb::plan::op::{AddressOp, Op};
use crate::lb::vips::Vips;
use crate::vcd::resources::ipspace::IpAllocation;
use crate::vcd::{VcdClient, VcdError};

/// After a move to `keep`, the releases of `owner`'s other claims (or their
/// passing on to a sharer still on their address).
pub async fn other_releases(
    client: &VcdClient,
    spaces: &[Space],
    view: &GatewayView,
    owner: &OwnerTag,
    keep: &Vips,
) -> Result<Vec<Op>, LbError> {
    let claims = find_claims(client, spaces, owner)
        .await
        .map_err(LbError::vcd(
            &format!("{}/{}", owner.namespace, owner.name),
            "finding the Service's IP Space allocations".into(),
        ))?;
    Ok(claims
        .into_iter()
        .filter(|(_, allocation)| !allocation.value.parse().is_ok_and(|ip| keep.contains(ip)))
        .map(|(space_id, allocation)| {
            Op::Address(hand_off(view, space_id, allocation, owner, None))
        })
        .collect())
}

/// IP Spaces: the release of `leaving`'s claim, unless another Service
/// sharing its address still holds it in `view` (one of `live`, if given):
/// the claim then passes to that Service, so a shared address lives as long
/// as its last sharer.
pub fn hand_off(
    view: &GatewayView,
    space_id: String,
    allocation: IpAllocation,
    leaving: &OwnerTag,
    live: Option<&HashSet<String>>,
) -> AddressOp {
    match sharing::successor(view, leaving, &allocation.value, live) {
        Some(sharer) => AddressOp::Mark {
            space_id,
            marker: sharer.format(),
            holder: format!("{}/{}", sharer.namespace, sharer.name),
            allocation,
        },
        None => AddressOp::Release {
            space_id,
            allocation,
        },
    }
}

/// IP Spaces: the rewrites of the Service's claims whose marker is not
/// `owner`'s now: written before identities were recorded, or with another
/// `retain` than the Service's decision now has.
pub async fn claims_to_adopt(
    client: &VcdClient,
    spaces: &[Space],
    owner: &OwnerTag,
    retain: bool,
) -> Result<Vec<Op>, VcdError> {
    let marker = owner.claim_marker(retain);
    Ok(find_claims(client, spaces, owner)
        .await?
        .into_iter()
        .filter(|(_, allocation)| allocation.description.as_deref() != Some(marker.as_str()))
        .map(|(space_id, allocation)| {
            Op::Address(AddressOp::Mark {
                space_id,
                allocation,
                marker: marker.clone(),
                holder: format!("{}/{}", owner.namespace, owner.name),
            })
        })
        .collect())
}

/// The write that makes a decided address `owner`'s Service's, kept past
/// it when `retain`.
pub fn claim_op(claim: SpaceClaim, owner: &OwnerTag, retain: bool) -> Op {
    let (marker, holder) = (
        owner.claim_marker(retain),
        format!("{}/{}", owner.namespace, owner.name),
    );
    Op::Address(match claim {
        SpaceClaim::Allocate {
            space_id,
            space_name,
            ip,
        } => AddressOp::Allocate {
            space_id,
            space_name,
            ip,
            marker,
            holder,
        },
        SpaceClaim::AllocateAny {
            space_id,
            space_name,
        } => AddressOp::AllocateAny {
            space_id,
            space_name,
            marker,
            holder,
        },
        SpaceClaim::Tag {
            space_id,
            allocation,
        } => AddressOp::Mark {
            space_id,
            allocation,
            marker,
            holder,
        },
    })
}

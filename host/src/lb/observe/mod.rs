//! Observe: what VCD holds, read before anything is decided. The gateway's
//! objects this cluster owns (one read per object family, kept as a
//! snapshot between reconciles), the slow-changing catalog (features,
//! service engine groups, library certificates), the cluster's tenant
//! health monitors and where external addresses come from. Nothing here writes.

pub(super) mod catalog;
pub(super) mod health;
pub(super) mod ipam;
pub(super) mod monitors;
pub(super) mod objects;
pub(super) mod snapshot;

//! Decide: the Service's policy asked in its sandbox and its answer
//! checked against what was observed; the addresses the decision resolves
//! to (IP blocks, IP Spaces and their claims, one-arm internal VIPs, the
//! second family of a dual-stack Service) and the Services sharing one.

pub(super) mod address;
pub(super) mod allocations;
pub(super) mod asking;
pub(super) mod certificates;
pub(super) mod claims;
pub(super) mod current;
pub(super) mod dual_stack;
pub(super) mod engine_groups;
pub(super) mod hints;
pub(super) mod input;
pub(super) mod internal;
pub(super) mod sharing;
pub(super) mod space_claims;

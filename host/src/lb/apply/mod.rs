//! Apply: the planned writes run in order, one request and its task each,
//! serialised per gateway, and the CAPVCD cluster RDE's `status.cpi`.

pub(super) mod applier;
mod claims;
mod firewall;
mod monitors;
pub(super) mod rde;

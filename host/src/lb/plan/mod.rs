//! Plan: the objects a decision asks for, compared with what was observed,
//! as an ordered list of writes ([`op::Op`]) for pools, virtual services,
//! HTTP rule lists and NAT rules; the desired member IP sets, firewall
//! objects, drains and the upstream CCM's objects to take over.

pub(super) mod certificate_prunes;
pub(super) mod claims;
pub(super) mod desired;
pub(super) mod drain;
pub(super) mod firewall;
pub(super) mod http_rules;
pub(super) mod member_groups;
pub(super) mod member_sets;
pub(super) mod members;
pub(super) mod monitor_ops;
pub(super) mod monitors;
pub(super) mod node_selection;
pub(super) mod objects;
pub(super) mod op;
pub(super) mod summary_drift;
pub(super) mod upstream;
pub(super) mod virtual_service_diff;

pub(super) use objects::{Target, desired, diff, point_at_group, teardown};

//! HTTP tests of vcdsim: a real client against the in-process server.

mod alb;
mod auth;
mod conformance;
mod distributed_only;
mod entities;
mod exercise;
mod faults;
mod firewall;
mod firewall_groups;
mod gateways;
mod ip_spaces;
mod ipv6;
mod ipv6_alb;
mod ipv6_ip_spaces;
mod legacy;
mod nat;
mod observe;
mod roles;
mod scenarios;
mod strict;
mod support;
mod tasks;
mod tenancy;
mod tls;
mod transparent;
mod versions;

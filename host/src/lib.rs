//! vcd-ccm: a Kubernetes cloud-controller-manager for VMware Cloud Director
//! whose load-balancer decisions are made by sandboxed WebAssembly policies.

pub mod access;
pub mod cli;
pub mod commands;
pub mod config;
pub mod controllers;
pub mod instances;
pub mod lb;
pub mod logging;
pub mod manager;
pub mod names;
pub mod policy;
pub mod preflight;
pub mod ratelimit;
pub mod serve;
pub mod text;
pub mod vcd;

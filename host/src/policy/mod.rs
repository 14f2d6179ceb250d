//! The policy host: loads sandboxed WebAssembly policy components and asks them
//! how to expose each Service.
//!
//! One module per concern: [`engine`] (shared engine, epoch ticker, the
//! runtime behind call deadlines), [`capacity`] (each policy's share of the
//! instance pool), [`contract`] (the contract versions served side by
//! side), [`loader`] (bytes → checked, linked policy), [`imports`]
//! (allow-list), [`sandbox`] (per-call store state and budgets), `runtime`
//! (calls, deadlines and error mapping), `output` (policy text made safe),
//! [`validate`] (contract checks on decisions), [`registry`] (which policy
//! serves which Service), [`decision`] (the governing decision, with
//! [`shadow`] policies beside it and [`capture`] of real inputs),
//! [`manifest`] and [`directory`] (the provider's policy ConfigMap and its
//! hot reload), [`oci`] (policies pulled from a registry), [`suite`] (policy test suites),
//! [`metrics`] (evaluations, loaded policies and reloads for `/metrics`).

pub mod builtin;
pub mod capacity;
pub mod capture;
mod compiled;
pub mod contract;
pub mod decision;
pub mod directory;
pub mod engine;
pub mod errors;
mod evaluation_metrics;
pub mod imports;
mod lift_charge;
pub mod loader;
pub mod manifest;
pub mod metrics;
pub mod model;
pub mod oci;
mod output;
pub mod registry;
mod runtime;
pub mod sandbox;
pub mod selector;
pub mod shadow;
pub mod suite;
pub mod validate;
pub mod yaml;

pub use engine::PolicyEngine;
pub use errors::{CallError, EvalError, LoadError};
pub use loader::{Policy, PolicySource};
pub use registry::Registry;
pub use sandbox::Limits;

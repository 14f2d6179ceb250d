//! The policy host: loads sandboxed WebAssembly policy components and asks them
//! how to expose each Service.
//!
//! One module per concern: [`engine`] (shared engine, epoch ticker), [`loader`]
//! (bytes → checked, linked policy), [`imports`] (allow-list), [`sandbox`]
//! (per-call store state and limits), `runtime` (calls and error mapping),
//! [`validate`] (contract checks on decisions), [`registry`] (which policy
//! serves which Service), [`manifest`] and [`directory`] (the provider's
//! policy ConfigMap and its hot reload), [`suite`] (policy test suites),
//! [`metrics`] (evaluations, loaded policies and reloads for `/metrics`).

pub mod builtin;
pub mod directory;
pub mod engine;
pub mod errors;
pub mod imports;
pub mod loader;
pub mod manifest;
pub mod metrics;
pub mod model;
pub mod registry;
mod runtime;
pub mod sandbox;
pub mod selector;
pub mod suite;
pub mod validate;
pub mod yaml;

pub use engine::PolicyEngine;
pub use errors::{CallError, EvalError, LoadError};
pub use loader::{Policy, PolicySource};
pub use registry::Registry;
pub use sandbox::Limits;

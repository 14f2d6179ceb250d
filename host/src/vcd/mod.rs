//! The VCD client: the only code that talks to VMware Cloud Director.
//!
//! [`VcdClient::connect`] negotiates the API version and logs in; after
//! that every call reuses one connection pool and one cached access token,
//! retries what is safe to retry, waits for VCD's tasks, and serialises
//! writes per edge gateway. Typed resources live in [`resources`]. The
//! configuration knobs are described in `README.md` beside this file.

// `VcdError` carries the call site and VCD's own words so an operator can
// act on it; it is returned on the cold path of network calls, where its
// size does not matter.

mod auth;
mod cache;
pub mod client;
pub mod clock;
pub mod config;
mod create;
pub mod credentials;
mod delete;
pub mod errors;
pub mod fiql;
mod gateway_locks;
pub mod metrics;
pub mod paging;
mod reachability;
pub mod reference;
pub mod resources;
pub mod retry;
pub mod rights;
pub mod rotation;
pub mod secret;
mod serialize;
pub mod task;
mod task_timing;
pub mod tasks;
pub mod token_memory;
mod transport;
pub mod version;

pub use client::VcdClient;
pub use config::{BodyLimits, ClientConfig, TaskPolicy, TlsOptions};
pub use credentials::{CredentialSource, Credentials};
pub use errors::{CallSite, VcdError};
pub use metrics::ClientMetrics;
pub use reachability::Reachability;
pub use retry::RetryPolicy;
pub use rotation::{LocalTokenStore, Rotation, StoreError, Stored, TokenHealth, TokenStore};
pub use secret::Secret;
pub use version::{ApiVersion, VersionRange};

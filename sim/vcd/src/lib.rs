//! vcdsim: a stateful VMware Cloud Director / NSX-T / NSX ALB API simulator
//! for tests, in the spirit of govmomi's `vcsim`. Start one in-process with
//! [`Sim::start`] from a [`Scenario`], point a client at
//! [`Sim::base_url`], and read or steer the world through the handle.

mod api;
mod auth;
mod context;
mod error;
pub mod faults;
mod fiql;
pub mod ids;
pub mod knobs;
mod middleware;
pub mod observe;
pub mod openapi;
mod paging;
mod respond;
pub mod scenario;
mod seed;
mod server;
mod state;
mod strict;
mod tasks;
mod tls;
pub mod world;

pub use error::ApiError;
pub use faults::{FaultAction, FaultRule};
pub use knobs::{BusyMode, Knobs};
pub use observe::LogEntry;
pub use scenario::{Scenario, ScenarioError};
pub use seed::Credentials;
pub use server::{Options, Sim, SimError};
pub use tls::TlsError;

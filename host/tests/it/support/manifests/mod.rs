//! Support of the manifest tests: reading `manifests/`, the RBAC model, and
//! the manager running against the simulators with its API calls recorded.

pub mod cluster;
pub mod deployment;
pub mod documents;
pub mod proxy;
pub mod rbac;

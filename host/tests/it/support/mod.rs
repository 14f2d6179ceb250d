//! What the integration tests share: polling, the simulated worlds (vcdsim
//! tenants, the load-balancer engine, the VM inventory), the in-process
//! controllers on kubesim, the `vcd-ccm run` process and the manifests.

/// The cluster id every harness configures (no RDE updates); tests of
/// several clusters name the others themselves.
pub const CLUSTER: &str = "NO_RDE_cluster-a";

pub mod alone;
pub mod capture;
pub mod check;
pub mod cluster;
pub mod crash;
pub mod dual_stack;
pub mod faults;
pub mod golden;
pub mod instances;
pub mod lb;
pub mod manifests;
pub mod nodes;
pub mod objects;
pub mod policies;
pub mod poll;
pub mod registry;
pub mod run;
pub mod tls;
pub mod toolchains;
pub mod tools;
pub mod vcd;
pub mod wire;

//! Figures of one NSX-T gateway at scale, printed as two Markdown tables:
//! VCD calls, time to an external IP and reads after a restart with a slow
//! VCD (table 1), and calls, memory and CPU per Service with 1,000 Services
//! over 5,000 Nodes on an instant one (table 2).
//!
//! vcdsim and kubesim run in this process, as libraries (as the integration
//! tests run them); the CCM is the real `vcd-ccm run` binary, a child
//! process, with 4 service workers and the Kubernetes client's rate limit
//! off. VCD calls are vcdsim's counters, task polls excluded.
//!
//! `cargo bench -p vcd-ccm --bench gateway_scale`; `GATEWAY_SCALE_SERVICES`
//! and `GATEWAY_SCALE_NODES` change table 2's sizes (1,000 and 5,000);
//! `GATEWAY_SCALE_CCM_WRAPPER` names a program each `vcd-ccm run` is started
//! through (its command line follows) that `exec`s it, so the figures read
//! from `/proc` stay the CCM's: `hack/heaptrack-exec.sh` records its heap.
//! Progress goes to stderr, the tables to stdout. Nothing is asserted: a
//! missed target reads "NOT met".

#[path = "gateway_scale/ccm.rs"]
mod ccm;
#[path = "gateway_scale/table.rs"]
mod table;
#[path = "gateway_scale/table1.rs"]
mod table1;
#[path = "gateway_scale/table2.rs"]
mod table2;
#[path = "gateway_scale/world.rs"]
mod world;

use std::sync::OnceLock;
use std::time::Instant;

/// One line of progress on stderr, stamped with the time since start.
pub fn progress(message: impl std::fmt::Display) {
    static START: OnceLock<Instant> = OnceLock::new();
    let elapsed = START.get_or_init(Instant::now).elapsed();
    eprintln!("[{:>7.1} s] {message}", elapsed.as_secs_f64());
}

/// A size from the environment, else `default`.
fn size(variable: &str, default: usize) -> usize {
    match std::env::var(variable) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("{variable}={text:?} is not a number")),
        Err(_) => default,
    }
}

#[tokio::main]
async fn main() {
    let services = size("GATEWAY_SCALE_SERVICES", 1_000);
    let nodes = size("GATEWAY_SCALE_NODES", 5_000);
    progress(format!(
        "sizes: table 1 {} and {} Services over {} Nodes; table 2 {services} Services over {nodes} Nodes",
        table1::SERVICES,
        table1::LARGE_GATEWAY,
        table1::NODES,
    ));
    let first = table1::run().await;
    let second = table2::run(services, nodes).await;
    table::print(&table1::title(), &first, &table1::notes());
    table::print(&table2::title(services, nodes), &second, &table2::notes());
}

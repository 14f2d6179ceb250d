//! Table 2: many Services over many Nodes on an instant VCD (0 ms per
//! call and per task): what the CCM itself costs per Service in VCD calls,
//! memory and CPU.

use std::time::{Duration, Instant};

use crate::ccm::{Ccm, restart};
use crate::table::{Row, seconds};
use crate::world::{Calls, World, names};

/// Services created concurrently by the benchmark.
const CREATES_AT_ONCE: usize = 16;
/// Writes for one Node joining, whatever the number of Services.
const JOIN_WRITES_TARGET: u64 = 2;
/// 150 MB, the memory target.
const MEMORY_TARGET_MB: f64 = 150.0;

pub fn title(services: usize, nodes: usize) -> String {
    format!("Table 2 — {services} Services over {nodes} Nodes, VCD at 0 ms per call and per task")
}

pub fn notes() -> Vec<String> {
    vec![
        format!("One-port TCP Services (port 80), created {CREATES_AT_ONCE} at a time; every pool takes its members from the cluster's IP set (API 39.1), which holds every Node. vcdsim enforces the spec's constraints (a pool lists at most 100 members). VCD calls exclude task polls."),
        "The Nodes registered as a kubelet does (uninitialised, a VM each) and were initialised by vcd-ccm before the Services were created. The cluster is zone-enabled with 100 VMs per vApp (both tables), as large clusters spread over vApps; vcd-ccm reads each vApp with its VMs in one answer.".into(),
        "Create: counted from the first Service's creation until all had an address and VCD stayed quiet for 3 s; CPU (utime + stime of /proc/<pid>/stat) over the same span.".into(),
        "No-op restart as in table 1. The joining Node is initialised by the restarted process; its calls count too.".into(),
        "Upstream CCM: its one-arm figures, all calls per Service (no figure for its shared-IP mode).".into(),
    ]
}

fn per_service(calls: &Calls, services: usize) -> String {
    format!(
        "{:.2} ({} reads, {} writes)",
        calls.total() as f64 / services as f64,
        calls.reads,
        calls.writes
    )
}

/// The Nodes of the cluster a pool could not list (more than 100).
const BEYOND_LISTS: usize = 150;
const BEYOND_LISTS_SERVICES: usize = 10;

/// A cluster of [`BEYOND_LISTS`] Nodes: before member groups its pools
/// were over the spec's 100 members, which vcdsim now refuses.
async fn beyond_member_lists() -> Row {
    crate::progress(format!(
        "table 2: {BEYOND_LISTS} Nodes, {BEYOND_LISTS_SERVICES} Services"
    ));
    let world = World::start().await;
    world.add_nodes(0..BEYOND_LISTS);
    let _ccm = Ccm::spawn(&world, "table2-ccm-150");
    world.wait_nodes_initialised(BEYOND_LISTS).await;
    world.wait_quiet().await;
    world.vcd.reset_log();
    let started = Instant::now();
    world
        .create_services(
            &names("wide", BEYOND_LISTS_SERVICES),
            &[80],
            CREATES_AT_ONCE,
        )
        .await;
    let took = world
        .wait_addressed(BEYOND_LISTS_SERVICES, started, Duration::from_millis(100))
        .await;
    let sizes: Vec<usize> = world
        .vcd
        .with_world(|w| w.pools.iter().map(|p| w.pool_member_ips(p).len()).collect());
    let refused = world
        .vcd
        .requests()
        .iter()
        .filter(|e| e.status == 400)
        .count();
    let served = sizes.len() == BEYOND_LISTS_SERVICES && sizes.iter().all(|n| *n == BEYOND_LISTS);
    Row {
        figure: format!(
            "{BEYOND_LISTS} Nodes, {BEYOND_LISTS_SERVICES} Services, pools limited to 100 listed members"
        ),
        upstream: "refused by VCD (over maxItems)".into(),
        measured: format!(
            "all addressed in {}; every pool reaches {BEYOND_LISTS} Nodes through the IP set; {refused} requests refused",
            seconds(took)
        ),
        physical: "—".into(),
        target: "served".into(),
        met: Some(served && refused == 0),
    }
}

pub async fn run(services: usize, nodes: usize) -> Vec<Row> {
    let wide = beyond_member_lists().await;
    crate::progress(format!(
        "table 2: vcdsim, kubesim, {nodes} Nodes and vcd-ccm start"
    ));
    let world = World::start().await;
    world.add_nodes(0..nodes);
    let ccm = Ccm::spawn(&world, "table2-ccm-1");
    let started = Instant::now();
    world.wait_nodes_initialised(nodes).await;
    crate::progress(format!(
        "{nodes} Nodes initialised after {}",
        seconds(started.elapsed())
    ));
    world.wait_quiet().await;

    crate::progress(format!("table 2: {services} Services"));
    world.vcd.reset_log();
    let cpu_before = ccm.cpu_seconds();
    let started = Instant::now();
    world
        .create_services(&names("svc", services), &[80], CREATES_AT_ONCE)
        .await;
    let took = world
        .wait_addressed(services, started, Duration::from_millis(200))
        .await;
    world.wait_quiet().await;
    let cpu = ccm.cpu_seconds() - cpu_before;
    let create = world.calls();
    let peak_create = ccm.peak_rss_mb();
    crate::progress(format!(
        "{services} Services addressed after {}; {cpu:.1} s CPU, peak {peak_create:.0} MB; {} reads, {} writes\n{}",
        seconds(took),
        create.reads,
        create.writes,
        create.breakdown()
    ));

    let (ccm, no_op) = restart(&world, ccm, "table2-ccm-2", services).await;

    crate::progress("table 2: one Node joins");
    world.vcd.reset_log();
    let started = Instant::now();
    world.add_nodes(nodes..nodes + 1);
    world.wait_pools_with_node(nodes, services).await;
    let took = started.elapsed();
    world.wait_quiet().await;
    let join = world.calls();
    let peak_restarted = ccm.peak_rss_mb();
    crate::progress(format!(
        "the new Node reached {services} pools after {}; {} reads, {} writes\n{}",
        seconds(took),
        join.reads,
        join.writes,
        join.breakdown()
    ));

    let peak = peak_create.max(peak_restarted);
    vec![
        Row {
            figure: "VCD calls per Service, create (until every Service has an IP)".into(),
            upstream: "—".into(),
            measured: per_service(&create, services),
            physical: "2 (a pool and a virtual service)".into(),
            target: "—".into(),
            met: None,
        },
        Row::restart(services, &no_op),
        Row {
            figure: "VCD calls per Service, one Node joins (every pool gains it)".into(),
            upstream: "≈155 calls (mode A)".into(),
            measured: per_service(&join, services),
            physical: "1 in all (the IP set)".into(),
            target: "—".into(),
            met: None,
        },
        Row {
            figure: format!("VCD writes in all, one Node joins {services} Services"),
            upstream: format!("{services} pool updates"),
            measured: join.writes.to_string(),
            physical: "1 (the cluster's IP set)".into(),
            target: format!("≤ {JOIN_WRITES_TARGET}"),
            met: Some(join.writes <= JOIN_WRITES_TARGET),
        },
        Row {
            figure: "Peak resident memory of `vcd-ccm run` (VmHWM)".into(),
            upstream: "—".into(),
            measured: format!(
                "{peak:.0} MB (creating: {peak_create:.0} MB, restarted: {peak_restarted:.0} MB)"
            ),
            physical: "—".into(),
            target: format!("≤ {MEMORY_TARGET_MB:.0} MB"),
            met: Some(peak <= MEMORY_TARGET_MB),
        },
        Row::plain(
            "CPU seconds per Service, create",
            "—",
            format!("{:.4} s ({cpu:.1} s for {services})", cpu / services as f64),
        ),
        wide,
    ]
}

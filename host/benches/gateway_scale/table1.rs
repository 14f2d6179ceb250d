//! Table 1: one gateway on a slow VCD (50 ms per call, 500 ms per task),
//! IP blocks, shared VIPs: what one Service costs, how close 50 at once
//! come to the gateway's task throughput, and what a restart reads.

use std::time::{Duration, Instant};

use crate::ccm::{Ccm, restart};
use crate::table::{Row, seconds};
use crate::world::{World, names};

/// One-port Services created at once, then found by a restart.
pub const SERVICES: usize = 50;
/// Services on the gateway at the second restart.
pub const LARGE_GATEWAY: usize = 500;
pub const NODES: usize = 2;
const LATENCY_MS: u64 = 50;
const TASK_MS: u64 = 500;
/// How often Services are looked at while their addresses are timed.
const TIMING_POLL: Duration = Duration::from_millis(10);

pub fn title() -> String {
    format!(
        "Table 1 — one gateway, {LATENCY_MS} ms per VCD call, {TASK_MS} ms per task (IP blocks, shared VIP, {NODES} Nodes)"
    )
}

pub fn notes() -> Vec<String> {
    vec![
        "VCD calls exclude task polls (`GET /api/task/{id}`). Services are plain TCP: ports 80 and 443 in rows 1–2, port 80 in rows 3–5; `clusterid` starts with `NO_RDE_`, so vcd-ccm writes no RDE.".into(),
        "Upstream CCM: hand count from its code, one poll per task. Row 1 is its shared-IP mode (http:80 + https:443, one certificate lookup), 35 of its calls being RDE updates it skips without a cluster id; rows 4–5 quote the only re-sync figure it has, all calls of a one-arm Service.".into(),
        format!("Physical limit of rows 2–3: every task the phase started × {TASK_MS} ms, one after another (a gateway runs one task at a time); call latency not included."),
        "Rows 4–5: vcd-ccm killed, vcdsim's counters reset, a new `vcd-ccm run` started and counted until it had synced every Service and VCD stayed quiet for 3 s: login, placement, the start-up sweep and the node controllers' reads included.".into(),
        format!("Row 5: the {} Services beyond the first {SERVICES} were created through vcd-ccm with VCD at 0 ms per call and task, then its speed was set back.", LARGE_GATEWAY - SERVICES),
    ]
}

/// The task time of `tasks` writes run one after another.
fn task_time(tasks: usize) -> Duration {
    Duration::from_millis(TASK_MS * tasks as u64)
}

fn tasks_cell(tasks: usize) -> String {
    format!(
        "{} ({tasks} tasks × {TASK_MS} ms)",
        seconds(task_time(tasks))
    )
}

pub async fn run() -> Vec<Row> {
    crate::progress("table 1: vcdsim, kubesim and vcd-ccm start");
    let world = World::start().await;
    world.set_vcd_speed(LATENCY_MS, TASK_MS);
    world.add_nodes(0..NODES);
    let ccm = Ccm::spawn(&world, "table1-ccm-1");
    world.wait_nodes_initialised(NODES).await;
    world.wait_quiet().await;

    let mut rows = one_service(&world).await;
    rows.push(at_once(&world).await);
    let (ccm, calls) = restart(&world, ccm, "table1-ccm-2", SERVICES).await;
    rows.push(Row::restart(SERVICES, &calls));

    crate::progress(format!(
        "table 1: {} more Services, VCD at 0 ms",
        LARGE_GATEWAY - SERVICES
    ));
    world.set_vcd_speed(0, 0);
    let more = names("more", LARGE_GATEWAY - SERVICES);
    world.create_services(&more, &[80], 16).await;
    world
        .wait_addressed(LARGE_GATEWAY, Instant::now(), Duration::from_millis(200))
        .await;
    world.wait_quiet().await;
    world.set_vcd_speed(LATENCY_MS, TASK_MS);
    let (_ccm, calls) = restart(&world, ccm, "table1-ccm-3", LARGE_GATEWAY).await;
    rows.push(Row::restart(LARGE_GATEWAY, &calls));
    rows
}

/// Rows 1–2: one 2-port Service from creation to its address; deleted
/// again afterwards, so the next rows start from an empty gateway.
async fn one_service(world: &World) -> Vec<Row> {
    crate::progress("table 1: one 2-port Service");
    world.vcd.reset_log();
    let tasks_before = world.tasks();
    let started = Instant::now();
    world.create_services(&["web".into()], &[80, 443], 1).await;
    let to_ip = world.wait_addressed(1, started, TIMING_POLL).await;
    world.wait_quiet().await;
    let calls = world.calls();
    let tasks = world.tasks() - tasks_before;
    crate::progress(format!(
        "one 2-port Service: IP after {}, {tasks} tasks, {} reads, {} writes\n{}",
        seconds(to_ip),
        calls.reads,
        calls.writes,
        calls.breakdown()
    ));
    world.delete_service("web").await;
    world.wait_quiet().await;
    let target = task_time(tasks) + Duration::from_millis(500);
    vec![
        Row {
            figure: "VCD calls for one 2-port Service".into(),
            upstream: "≈125".into(),
            measured: format!(
                "{} ({} reads, {} writes)",
                calls.total(),
                calls.reads,
                calls.writes
            ),
            // A read for the address, the cluster's member IP set (the
            // gateway's first Service writes it), 2 pools, 2 virtual services.
            physical: "6".into(),
            target: "≤ 7".into(),
            met: Some(calls.total() <= 6),
        },
        Row {
            figure: "Time to IP, one 2-port Service".into(),
            upstream: "—".into(),
            measured: seconds(to_ip),
            physical: tasks_cell(tasks),
            target: format!("≤ {} (Σ tasks + 0.5 s)", seconds(target)),
            met: Some(to_ip <= target),
        },
    ]
}

/// Row 3: `SERVICES` one-port Services created at once.
async fn at_once(world: &World) -> Row {
    crate::progress(format!("table 1: {SERVICES} one-port Services at once"));
    world.vcd.reset_log();
    let tasks_before = world.tasks();
    let started = Instant::now();
    world
        .create_services(&names("one", SERVICES), &[80], SERVICES)
        .await;
    let took = world.wait_addressed(SERVICES, started, TIMING_POLL).await;
    world.wait_quiet().await;
    let calls = world.calls();
    let tasks = world.tasks() - tasks_before;
    crate::progress(format!(
        "{SERVICES} Services at once: all addressed after {}, {tasks} tasks, {} reads, {} writes\n{}",
        seconds(took),
        calls.reads,
        calls.writes,
        calls.breakdown()
    ));
    let target = task_time(tasks).mul_f64(1.2);
    Row {
        figure: format!("{SERVICES} one-port Services created at once: time until all have an IP"),
        upstream: "—".into(),
        measured: seconds(took),
        physical: tasks_cell(tasks),
        target: format!("≤ {} (1.2 × Σ tasks)", seconds(target)),
        met: Some(took <= target),
    }
}

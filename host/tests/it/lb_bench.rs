//! The load balancer's VCD call counts (vcdsim's counters, task polls
//! excluded) against the targets, and 50 Services ensured at once
//! with the busy window on. Run with `--nocapture` to see the figures.

use crate::support::vcd;
use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::support::lb::*;
use vcdsim::Sim;

fn report(sim: &Sim, what: &str, target: &str) -> (u64, u64) {
    let (reads, writes) = calls(sim);
    println!(
        "{what}: {} calls ({reads} reads, {writes} writes); target {target}\n{}",
        reads + writes,
        call_lines(sim)
    );
    (reads, writes)
}

async fn figures(mode: ModeKind, spaces: bool) -> [(u64, u64); 5] {
    let sim = if spaces {
        vcd::sim_from(spaces_scenario()).await
    } else {
        vcd::sim_from(blocks_scenario()).await
    };
    println!(
        "==== {mode:?}, {} ====",
        if spaces { "IP Spaces" } else { "IP blocks" }
    );
    let lb = engine(&sim, config(CLUSTER, mode)).await;
    sim.reset_log();
    let first = web_service("shop", "first", "uid-first");
    lb.ensure(&first, &nodes(2)).await.unwrap();
    let cold = report(
        &sim,
        "create 2-port, first Service of the engine (cold caches)",
        "-",
    );

    let svc = web_service("shop", "web", "uid-web");
    sim.reset_log();
    lb.ensure(&svc, &nodes(2)).await.unwrap();
    let create = report(&sim, "create 2-port", "<= 6");
    sim.reset_log();
    lb.ensure(&svc, &nodes(2)).await.unwrap();
    let noop = report(&sim, "no-op re-ensure", "0 reads, 0 writes");
    sim.reset_log();
    lb.update(&svc, &nodes(3)).await.unwrap();
    let nodes_changed = report(&sim, "node-set change", "<= 2");
    sim.reset_log();
    lb.delete(&svc).await.unwrap();
    let delete = report(&sim, "delete", "<= 6");
    [cold, create, noop, nodes_changed, delete]
}

#[tokio::test]
async fn call_counts_meet_the_targets_in_shared_vip_mode() {
    let [_, create, noop, nodes_changed, delete] = figures(ModeKind::SharedVip, false).await;
    let total = |(r, w): (u64, u64)| r + w;
    // The gateway snapshot answers every read but the address's own.
    assert!(total(create) <= 6, "create {create:?}");
    assert_eq!(noop, (0, 0), "no-op {noop:?}");
    assert!(total(nodes_changed) <= 2, "node change {nodes_changed:?}");
    assert!(total(delete) <= 6, "delete {delete:?}");
}

#[tokio::test]
async fn call_counts_of_the_other_modes_and_sources() {
    for (mode, spaces) in [
        (ModeKind::SharedVip, true),
        (ModeKind::SharedVipOneArm, false),
        (ModeKind::SharedVipOneArm, true),
        (ModeKind::OneArm, false),
        (ModeKind::OneArm, true),
    ] {
        let [_, _, noop, _, _] = figures(mode, spaces).await;
        assert_eq!(noop, (0, 0), "{mode:?} no-op calls");
    }
}

#[tokio::test]
async fn fifty_services_converge_concurrently_with_the_busy_window_on() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    sim.set_knobs(|k| {
        k.task_duration_ms = 20;
        k.busy_cooldown_ms = 10;
    });
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    sim.reset_log();
    let services: Vec<_> = (0..50)
        .map(|i| web_service("load", &format!("svc-{i}"), &format!("uid-{i}")))
        .collect();
    let three = nodes(3);
    let started = Instant::now();
    let results =
        futures::future::join_all(services.iter().map(|svc| lb.ensure(svc, &three))).await;
    let wall = started.elapsed();
    let mut addresses = HashSet::new();
    for result in results {
        let status = result.expect("every Service converges");
        assert!(
            addresses.insert(status.ingress[0].ip.clone()),
            "address reported twice"
        );
    }
    let (reads, writes) = calls(&sim);
    println!(
        "50 Services x 2 ports, busy window on (task 20 ms, cooldown 10 ms): wall {wall:?}, {reads} reads, {writes} writes, {} BUSY retries visible as extra writes",
        writes.saturating_sub(200)
    );
    let all = objects(&sim);
    assert_eq!(
        all.len(),
        200,
        "two pools and two virtual services each, no duplicates"
    );
    let names: HashSet<_> = all.iter().map(|o| o.name.clone()).collect();
    assert_eq!(names.len(), 200);
    assert!(wall < Duration::from_secs(120));
}

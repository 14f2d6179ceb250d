//! Crash safety: for every VCD call k of a 2-port create, a fault at call k
//! (an error, or a connection dropped mid-answer) stops the reconcile; a
//! fresh engine (a restarted CCM) then converges to the same end state with
//! no leaked or duplicated object.

use crate::support::vcd;
use std::collections::BTreeSet;

use crate::support::faults::assert_fired;
use crate::support::lb::*;
use vcdsim::{FaultAction, FaultRule, Sim};

const UID: &str = "uid-crash";

async fn start(mode: ModeKind) -> (Sim, vcd_ccm::lb::LoadBalancers) {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, mode)).await;
    sim.reset_log();
    (sim, lb)
}

/// Every call of an undisturbed create, task polls included (faults see them too).
async fn calls_of_a_create(mode: ModeKind) -> u64 {
    let (sim, lb) = start(mode).await;
    lb.ensure(&web_service("shop", "web", UID), &nodes(2))
        .await
        .expect("an undisturbed create");
    sim.counters().values().sum()
}

fn expect_converged(sim: &Sim, mode: ModeKind, ip: &str, step: &str) {
    let ours = objects_of(sim, UID);
    let per_port = if mode == ModeKind::SharedVip { 2 } else { 3 };
    assert_eq!(ours.len(), 2 * per_port, "{step}: {ours:#?}");
    assert_eq!(
        objects(sim).len(),
        ours.len(),
        "{step}: strays {:#?}",
        objects(sim)
    );
    let names: BTreeSet<&str> = ours.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names.len(), ours.len(), "{step}: duplicated names");
    let external = if mode == ModeKind::SharedVip {
        "virtual service"
    } else {
        "nat rule"
    };
    assert!(
        ours.iter()
            .filter(|o| o.kind == external)
            .all(|o| o.address == ip),
        "{step}: {ours:#?}"
    );
}

async fn crash_every_step(mode: ModeKind) {
    let total = calls_of_a_create(mode).await;
    assert!(total >= 4, "a create makes calls");
    let actions = [
        FaultAction::Error {
            status: 400,
            minor_error_code: "INJECTED_FAULT".into(),
            message: "injected by the crash test".into(),
        },
        FaultAction::Reset,
    ];
    for k in 1..=total {
        for action in &actions {
            let step = format!("{mode:?}, fault {action:?} at call {k} of {total}");
            let (sim, lb) = start(mode).await;
            sim.add_fault(
                FaultRule::new(None, "*", action.clone())
                    .skip((k - 1) as u32)
                    .times(1),
            );
            let svc = web_service("shop", "web", UID);
            let disturbed = lb.ensure(&svc, &nodes(2)).await.map(drop);
            assert_fired(
                &sim,
                &format!("{step} (the disturbed run gave {disturbed:?})"),
            );
            let restarted = engine(&sim, config(CLUSTER, mode)).await;
            let status = restarted
                .ensure(&svc, &nodes(2))
                .await
                .unwrap_or_else(|e| panic!("{step}: {e}"));
            expect_converged(&sim, mode, &status.ingress[0].ip, &step);
            sim.reset_log();
            restarted.ensure(&svc, &nodes(2)).await.unwrap();
            assert_eq!(
                calls(&sim).1,
                0,
                "{step}: not converged:\n{}",
                call_lines(&sim)
            );
        }
    }
}

#[tokio::test]
async fn shared_vip_create_survives_a_fault_at_every_call() {
    crash_every_step(ModeKind::SharedVip).await;
}

#[tokio::test]
async fn one_arm_create_survives_a_fault_at_every_call() {
    crash_every_step(ModeKind::OneArm).await;
}

#[tokio::test]
async fn a_create_left_in_flight_by_a_stopped_process_is_adopted_at_once() {
    let (sim, lb) = start(ModeKind::SharedVip).await;
    sim.set_knobs(|k| k.task_duration_ms = 300);
    let svc = web_service("shop", "web", UID);
    // The first process stops right after its first create was accepted.
    let first = tokio::spawn(async move { lb.ensure(&svc, &nodes(2)).await });
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !sim.requests().iter().any(|r| r.method == "POST") {
        assert!(tokio::time::Instant::now() < deadline, "no create was sent");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    first.abort();
    let restarted = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let status = restarted
        .ensure(&web_service("shop", "web", UID), &nodes(2))
        .await
        .expect("the restarted engine converges in one ensure");
    expect_converged(
        &sim,
        ModeKind::SharedVip,
        &status.ingress[0].ip,
        "in flight",
    );
}

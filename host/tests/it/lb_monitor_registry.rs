//! What the engine knows of the cluster's tenant monitors (API 39.0+) is
//! dropped by every drift check. One landing while a reconcile is between
//! a monitor's create and its assignment must change nothing: the
//! reconcile reads the monitors again and finishes, with one monitor,
//! assigned, rather than failing the assignment (after which another
//! Service's pass deleted the monitor as unused and the first made it
//! again).

use std::sync::Arc;

use crate::support::lb::*;
use crate::support::poll::wait_for;
use crate::support::vcd;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drift_check_between_a_monitors_create_and_its_assignment_changes_nothing() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = Arc::new(engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await);
    // Long tasks: the pool's create holds the reconcile between the two.
    sim.set_knobs(|k| k.task_duration_ms = 300);
    let mut spec = service("shop", "web", "uid-web", vec![tcp(80, 30080)]);
    spec.annotations
        .insert("vcd-ccm.io/health-check-interval".into(), "5s".into());
    let ensure = tokio::spawn({
        let (lb, spec) = (lb.clone(), spec.clone());
        async move { lb.ensure(&spec, &nodes(2)).await }
    });
    let tenant =
        |w: &vcdsim::world::World| w.health_monitors.iter().filter(|m| !m.is_system()).count();
    wait_for("the monitor made and not yet assigned", || async {
        sim.with_world(|w| (tenant(w) == 1 && w.monitor_assignments.is_empty()).then_some(()))
    })
    .await;
    lb.refresh_gateway()
        .await
        .expect("the drift check reads the gateway");
    ensure
        .await
        .expect("the reconcile runs")
        .expect("the reconcile finishes");
    let (monitors, assignments) = sim.with_world(|w| (tenant(w), w.monitor_assignments.len()));
    assert_eq!(
        (monitors, assignments),
        (1, 1),
        "one monitor, assigned to the pool"
    );
}

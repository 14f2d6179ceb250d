//! What crash tests inject and restart: the writes of an undisturbed run,
//! to hit in turn, a crash before a write lands, the engine a restarted
//! process builds over the same journal, and the loop that disturbs an
//! operation at every write.

use std::collections::HashMap;
use std::sync::Arc;

use vcd_ccm::lb::{AllocationJournal, LbConfig, LoadBalancers};
use vcdsim::{FaultAction, FaultRule, Sim};

use super::faults::assert_fired;
use super::lb::{KUBE_SYSTEM_UID, call_lines, calls, default_registry, identity, journal_engine};

/// The engine of a restarted process of this cluster, with `journal`.
pub async fn engine_with_journal(
    sim: &Sim,
    config: &LbConfig,
    journal: Arc<dyn AllocationJournal>,
) -> LoadBalancers {
    let registry = default_registry(config).await;
    journal_engine(
        sim,
        config.clone(),
        registry,
        identity(KUBE_SYSTEM_UID),
        journal,
    )
    .await
}

/// The writes a run made, as (method, route, occurrence of that pair).
pub fn writes_in_order(sim: &Sim) -> Vec<(String, String, u32)> {
    let mut seen = HashMap::new();
    sim.requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .map(|r| {
            let n = seen
                .entry((r.method.clone(), r.template.clone()))
                .or_insert(0);
            *n += 1;
            (r.method, r.template, *n - 1)
        })
        .collect()
}

/// An error in place of the write: the process stopped before it landed.
pub fn crash_before() -> FaultAction {
    FaultAction::Error {
        status: 503,
        minor_error_code: "INJECTED_CRASH".into(),
        message: "the process stops before this write lands".into(),
    }
}

/// A world to disturb: the simulator, the engine and what a restarted
/// process would build its engine from.
pub struct CrashWorld {
    pub sim: Sim,
    pub lb: LoadBalancers,
    pub journal: Arc<dyn AllocationJournal>,
    pub config: LbConfig,
}

/// One operation to disturb at every write.
pub trait CrashCase {
    /// What must come out the same: ours, and another owner's.
    type State: PartialEq + std::fmt::Debug;

    /// A fresh world, set up up to the operation.
    async fn world(&self) -> CrashWorld;

    async fn run(&self, lb: &LoadBalancers) -> Result<(), String>;

    fn ours(&self, sim: &Sim) -> Self::State;

    fn foreign(&self, sim: &Sim) -> Self::State;
}

/// Runs `case` undisturbed, then once per write of that run with a crash
/// before the write and once with its answer lost after it landed. After
/// each, a restarted engine repeats the operation and must leave what the
/// undisturbed run left, the foreign state untouched, and nothing more to
/// write. Returns how many writes the operation makes.
pub async fn every_write(name: &str, case: &impl CrashCase) -> usize {
    let w = case.world().await;
    case.run(&w.lb).await.expect("an undisturbed run");
    let expected = case.ours(&w.sim);
    let writes = writes_in_order(&w.sim);
    assert!(!writes.is_empty(), "{name} writes");
    for (method, route, occurrence) in &writes {
        for action in [crash_before(), FaultAction::LoseAnswer] {
            let step = format!("{name}: {action:?} at {method} {route} #{occurrence}");
            let w = case.world().await;
            let foreign = case.foreign(&w.sim);
            w.sim.add_fault(
                FaultRule::new(Some(method), route, action)
                    .skip(*occurrence)
                    .times(1),
            );
            let disturbed = case.run(&w.lb).await;
            assert_fired(
                &w.sim,
                &format!("{step} (the disturbed run gave {disturbed:?})"),
            );
            drop(w.lb);
            let restarted = engine_with_journal(&w.sim, &w.config, w.journal.clone()).await;
            case.run(&restarted)
                .await
                .unwrap_or_else(|e| panic!("{step}: the restarted engine fails: {e}"));
            assert_eq!(case.ours(&w.sim), expected, "{step}");
            assert_eq!(case.foreign(&w.sim), foreign, "{step}: foreign");
            w.sim.reset_log();
            case.run(&restarted).await.expect("a repeat");
            assert_eq!(
                calls(&w.sim).1,
                0,
                "{step}: not converged:\n{}",
                call_lines(&w.sim)
            );
        }
    }
    writes.len()
}

//! What crash tests inject and restart: the writes of an undisturbed run,
//! to hit in turn, a crash before a write lands, and the engine a
//! restarted process builds over the same journal.

use std::collections::HashMap;
use std::sync::Arc;

use vcd_ccm::lb::{AllocationJournal, LbConfig, LoadBalancers};
use vcdsim::{FaultAction, Sim};

use super::lb::{KUBE_SYSTEM_UID, default_registry, identity, journal_engine};

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

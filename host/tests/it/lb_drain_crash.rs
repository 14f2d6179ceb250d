//! The end of a drain loses nothing: a Service with a drain period, whose
//! third Node left and whose period has run out, is reconciled; each write
//! (each pool dropping the disabled member) is hit in turn by a crash
//! before it lands and by a lost answer after it landed, and a restarted
//! engine must leave the pools with the two remaining Nodes, enabled, and
//! nothing more to write. (The writes that start a drain are in
//! `lb_crash_matrix`, operation `NodeLeftDraining`.)

use std::collections::BTreeSet;
use std::sync::Arc;

use vcd_ccm::lb::{AllocationJournal, LoadBalancers, ServiceSpec};
use vcdsim::Sim;

use crate::support::crash::{CrashCase, CrashWorld, engine_with_journal, every_write};
use crate::support::lb::*;
use crate::support::vcd;

const UID: &str = "uid-drain";

fn draining() -> ServiceSpec {
    let mut spec = service("shop", "web", UID, vec![tcp(80, 30080), tcp(443, 30443)]);
    spec.annotations
        .insert("vcd-ccm.io/drain-period".into(), "1s".into());
    spec
}

struct DrainEnded;

impl CrashCase for DrainEnded {
    type State = BTreeSet<(String, String, bool)>;

    /// The Service on three Nodes, then on two with the third draining,
    /// then past the drain's end.
    async fn world(&self) -> CrashWorld {
        let sim = vcd::sim_from(blocks_scenario()).await;
        let config = config(CLUSTER, ModeKind::SharedVip);
        let journal: Arc<dyn AllocationJournal> = Arc::new(MemoryJournal::default());
        let lb = engine_with_journal(&sim, &config, journal.clone()).await;
        lb.ensure(&draining(), &nodes(3))
            .await
            .expect("three Nodes");
        let status = lb.ensure(&draining(), &nodes(2)).await.expect("one leaves");
        assert!(status.recheck_after.is_some(), "a drain under way");
        assert!(
            self.ours(&sim).iter().any(|(_, _, enabled)| !enabled),
            "a member disabled"
        );
        // The drain's end, without waiting for it: each pool's tag records
        // its deadline (`spec=<digest>.<Unix seconds>`); move it into the past.
        sim.with_world(|w| {
            for pool in &mut w.pools {
                let description = pool.description.clone().unwrap_or_default();
                let (head, deadline) = description.rsplit_once('.').expect("a deadline");
                let deadline: u64 = deadline.parse().expect("Unix seconds");
                pool.description = Some(format!("{head}.{}", deadline - 60));
            }
        });
        // An engine that reads the pools anew, as one would once its
        // snapshot of the gateway is refreshed.
        drop(lb);
        let lb = engine_with_journal(&sim, &config, journal.clone()).await;
        sim.reset_log();
        CrashWorld {
            sim,
            lb,
            journal,
            config,
        }
    }

    async fn run(&self, lb: &LoadBalancers) -> Result<(), String> {
        let status = lb
            .ensure(&draining(), &nodes(2))
            .await
            .map_err(|e| e.to_string())?;
        match status.recheck_after {
            None => Ok(()),
            Some(after) => Err(format!("still draining, for {after:?}")),
        }
    }

    fn ours(&self, sim: &Sim) -> Self::State {
        pool_members(sim)
    }

    fn foreign(&self, _: &Sim) -> Self::State {
        BTreeSet::new()
    }
}

#[tokio::test]
async fn the_end_of_a_drain_survives_a_crash_or_lost_answer_at_every_write() {
    let writes = every_write("drain ended", &DrainEnded).await;
    assert_eq!(writes, 2, "one write per pool");
}

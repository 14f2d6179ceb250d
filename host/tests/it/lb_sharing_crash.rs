//! Shared addresses lose nothing at any step. Two Services with one sharing
//! key: a second joining the first's address, the first (the IP Space
//! claim's holder) leaving, and the sweep removing the first after it went
//! while the CCM was down. Every VCD write of each is hit in turn by a
//! crash before it lands and by a lost answer after it landed; a restarted
//! engine repeats the operation and must leave exactly what an undisturbed
//! run leaves (objects, the shared address, the claim and who holds it),
//! another cluster's Service untouched, and nothing more to write.
//!
//! `cargo test --test it lb_sharing_crash -- --nocapture` prints the steps.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use vcd_ccm::lb::{
    AllocationJournal, LbConfig, LoadBalancers, SHARING_KEY_ANNOTATION, ServiceSpec,
};
use vcdsim::{FaultAction, FaultRule, Sim};

use crate::support::crash::{crash_before, engine_with_journal, writes_in_order};
use crate::support::lb::*;
use crate::support::vcd;

const FIRST: &str = "uid-share-first";
const SECOND: &str = "uid-share-second";
const FOREIGN: &str = "uid-share-foreign";

#[derive(Debug, Clone, Copy)]
enum Op {
    Join,
    Leave,
    Sweep,
}

fn keyed(name: &str, uid: &str, port: u16, node_port: u16) -> ServiceSpec {
    let mut spec = service("shop", name, uid, vec![tcp(port, node_port)]);
    spec.annotations
        .insert(SHARING_KEY_ANNOTATION.into(), "front".into());
    spec
}

fn first() -> ServiceSpec {
    keyed("web", FIRST, 80, 30080)
}

fn second() -> ServiceSpec {
    keyed("api", SECOND, 8080, 30081)
}

/// Both Services' objects (kind, name, address) and the IP Space
/// allocations tagged for either, with the uid the tag names.
fn state(sim: &Sim) -> BTreeSet<(String, String, String)> {
    let objects = [FIRST, SECOND].into_iter().flat_map(|uid| {
        objects_of(sim, uid)
            .into_iter()
            .map(|o| (o.kind.to_string(), o.name, o.address))
    });
    let claims = allocations(sim).into_iter().filter_map(|(value, tag)| {
        [FIRST, SECOND]
            .into_iter()
            .find(|uid| tag.contains(&format!("uid={uid}")))
            .map(|uid| ("claim".to_string(), uid.to_string(), value))
    });
    objects.chain(claims).collect()
}

struct World {
    sim: Sim,
    lb: LoadBalancers,
    journal: Arc<dyn AllocationJournal>,
    config: LbConfig,
}

/// Another cluster's Service, the first sharer, and the second too unless
/// the operation is the join.
async fn world(kind: ModeKind, spaces: bool, op: Op) -> World {
    let sim = vcd::sim_from(if spaces {
        spaces_scenario()
    } else {
        blocks_scenario()
    })
    .await;
    let config = config(CLUSTER, kind);
    other_cluster_engine(&sim, config.clone())
        .await
        .ensure(
            &service("shop", "web", FOREIGN, vec![tcp(80, 31080)]),
            &nodes(1),
        )
        .await
        .expect("another cluster's Service");
    let journal: Arc<dyn AllocationJournal> = Arc::new(MemoryJournal::default());
    let lb = engine_with_journal(&sim, &config, journal.clone()).await;
    let ip = lb
        .ensure(&first(), &nodes(2))
        .await
        .expect("the first")
        .ingress[0]
        .ip
        .clone();
    if !matches!(op, Op::Join) {
        let joined = lb.ensure(&second(), &nodes(2)).await.expect("the second");
        assert_eq!(joined.ingress[0].ip, ip, "the second shares the address");
    }
    sim.reset_log();
    World {
        sim,
        lb,
        journal,
        config,
    }
}

async fn run(lb: &LoadBalancers, op: Op) -> Result<(), String> {
    let done = match op {
        Op::Join => lb.ensure(&second(), &nodes(2)).await.map(drop),
        Op::Leave => lb.delete(&first()).await,
        Op::Sweep => lb
            .sweep(&HashSet::from([SECOND.to_string()]))
            .await
            .map(drop),
    };
    done.map_err(|e| e.to_string())
}

async fn every_step(name: &str, kind: ModeKind, spaces: bool) {
    println!("| mode | operation | writes | runs |\n|---|---|---|---|");
    for op in [Op::Join, Op::Leave, Op::Sweep] {
        let w = world(kind, spaces, op).await;
        run(&w.lb, op).await.expect("an undisturbed run");
        let expected = state(&w.sim);
        let writes = writes_in_order(&w.sim);
        assert!(!writes.is_empty(), "{name} {op:?} writes");
        for (method, route, occurrence) in &writes {
            for action in [crash_before(), FaultAction::LoseAnswer] {
                let step = format!("{name} {op:?}: {action:?} at {method} {route} #{occurrence}");
                let w = world(kind, spaces, op).await;
                let foreign = objects_of(&w.sim, FOREIGN);
                w.sim.add_fault(
                    FaultRule::new(Some(method), route, action)
                        .skip(*occurrence)
                        .times(1),
                );
                let _ = run(&w.lb, op).await;
                w.sim.clear_faults();
                drop(w.lb);
                let restarted = engine_with_journal(&w.sim, &w.config, w.journal.clone()).await;
                run(&restarted, op)
                    .await
                    .unwrap_or_else(|e| panic!("{step}: the restarted engine fails: {e}"));
                assert_eq!(state(&w.sim), expected, "{step}");
                assert_eq!(objects_of(&w.sim, FOREIGN), foreign, "{step}: foreign");
                w.sim.reset_log();
                run(&restarted, op).await.expect("a repeat");
                assert_eq!(
                    calls(&w.sim).1,
                    0,
                    "{step}: not converged:\n{}",
                    call_lines(&w.sim)
                );
            }
        }
        println!(
            "| {name} | {op:?} | {} | {} |",
            writes.len(),
            2 * writes.len()
        );
    }
}

#[tokio::test]
async fn shared_vip_sharing_survives_a_crash_or_lost_answer_at_every_write() {
    every_step("shared VIP", ModeKind::SharedVip, false).await;
}

#[tokio::test]
async fn shared_vip_one_arm_sharing_survives_a_crash_or_lost_answer_at_every_write() {
    every_step("shared VIP + one-arm", ModeKind::SharedVipOneArm, false).await;
}

#[tokio::test]
async fn ip_space_sharing_survives_a_crash_or_lost_answer_at_every_write() {
    every_step("IP Spaces (shared VIP)", ModeKind::SharedVip, true).await;
}

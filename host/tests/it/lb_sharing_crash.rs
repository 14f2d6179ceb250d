//! Shared addresses lose nothing at any step. Two Services with one sharing
//! key: a second joining the first's address, the first (the IP Space
//! claim's holder) leaving, the first dropping its key and moving to an
//! address of its own (its claim passes on after the move), and the sweep
//! removing the first after it went while the CCM was down. Every VCD write of each is hit in turn by a
//! crash before it lands and by a lost answer after it landed; a restarted
//! engine repeats the operation and must leave exactly what an undisturbed
//! run leaves (objects, the shared address, the claim and who holds it),
//! another cluster's Service untouched, and nothing more to write.
//!
//! `cargo test --test it lb_sharing_crash -- --nocapture` prints the steps.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use vcd_ccm::lb::{AllocationJournal, LoadBalancers, SHARING_KEY_ANNOTATION, ServiceSpec};
use vcdsim::Sim;

use crate::support::crash::{CrashCase, CrashWorld, engine_with_journal, every_write};
use crate::support::lb::*;
use crate::support::vcd;

const FIRST: &str = "uid-share-first";
const SECOND: &str = "uid-share-second";
const FOREIGN: &str = "uid-share-foreign";

#[derive(Debug, Clone, Copy)]
enum Op {
    Join,
    Leave,
    /// The first (the IP Space claim's holder) drops its key and moves to
    /// an address of its own, passing its claim on.
    Depart,
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

/// One operation on Services of `kind` on IP blocks or Spaces.
struct Sharing {
    kind: ModeKind,
    spaces: bool,
    op: Op,
}

impl CrashCase for Sharing {
    type State = BTreeSet<(String, String, String)>;

    /// Another cluster's Service, the first sharer, and the second too
    /// unless the operation is the join.
    async fn world(&self) -> CrashWorld {
        let sim = vcd::sim_from(if self.spaces {
            spaces_scenario()
        } else {
            blocks_scenario()
        })
        .await;
        let config = config(CLUSTER, self.kind);
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
        if !matches!(self.op, Op::Join) {
            let joined = lb.ensure(&second(), &nodes(2)).await.expect("the second");
            assert_eq!(joined.ingress[0].ip, ip, "the second shares the address");
        }
        sim.reset_log();
        CrashWorld {
            sim,
            lb,
            journal,
            config,
        }
    }

    async fn run(&self, lb: &LoadBalancers) -> Result<(), String> {
        let done = match self.op {
            Op::Join => lb.ensure(&second(), &nodes(2)).await.map(drop),
            Op::Leave => lb.delete(&first()).await,
            Op::Depart => {
                // As the controller would pass it: the status still names
                // the shared address until the move is done.
                let shared = lb.get(&second()).await.map_err(|e| e.to_string())?;
                let mut departed = service("shop", "web", FIRST, vec![tcp(80, 30080)]);
                departed.reported_ips = shared
                    .into_iter()
                    .flat_map(|status| status.ingress)
                    .map(|ingress| ingress.ip)
                    .collect();
                lb.ensure(&departed, &nodes(2)).await.map(drop)
            }
            Op::Sweep => lb
                .sweep(&HashSet::from([SECOND.to_string()]))
                .await
                .map(drop),
        };
        done.map_err(|e| e.to_string())
    }

    fn ours(&self, sim: &Sim) -> Self::State {
        state(sim)
    }

    /// Another cluster's objects, tags included.
    fn foreign(&self, sim: &Sim) -> Self::State {
        objects_of(sim, FOREIGN)
            .into_iter()
            .map(|o| {
                (
                    o.kind.to_string(),
                    format!("{} {}", o.name, o.description),
                    o.address,
                )
            })
            .collect()
    }
}

async fn every_step(name: &str, kind: ModeKind, spaces: bool) {
    println!("| mode | operation | writes | runs |\n|---|---|---|---|");
    for op in [Op::Join, Op::Leave, Op::Depart, Op::Sweep] {
        let case = Sharing { kind, spaces, op };
        let writes = every_write(&format!("{name} {op:?}"), &case).await;
        println!("| {name} | {op:?} | {writes} | {} |", 2 * writes);
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

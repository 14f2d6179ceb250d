//! Dual-stack addresses lose nothing at any step. A Service that requires
//! both families is created, narrowed to IPv4 alone, deleted, and swept
//! after it went while the CCM was down, on IP
//! blocks and on IP Spaces (where each family's address is an allocation
//! of its own space, allocated and claimed one after the other). Every VCD
//! write of each operation is hit in turn by a crash before it lands and by
//! a lost answer after it landed; a restarted engine repeats the operation
//! and must leave exactly what an undisturbed run leaves (objects, both
//! VIPs, the claims), another cluster's Service untouched, and nothing more
//! to write.
//!
//! `cargo test --test it lb_dual_stack_crash -- --nocapture` prints the steps.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use vcd_ccm::lb::{AllocationJournal, FamilyPolicy, LoadBalancers, ServiceSpec};
use vcd_ccm::policy::model::IpFamily;
use vcdsim::Sim;

use crate::support::crash::{CrashCase, CrashWorld, engine_with_journal, every_write};
use crate::support::dual_stack::{self, vips_of};
use crate::support::lb::*;
use crate::support::vcd;

const UID: &str = "uid-dual";
const FOREIGN: &str = "uid-dual-foreign";

#[derive(Debug, Clone, Copy)]
enum Op {
    Create,
    Narrow,
    Delete,
    /// The sweep at start, after the Service went while the CCM was down.
    Sweep,
}

fn dual() -> ServiceSpec {
    let mut spec = service("default", "web", UID, vec![tcp(80, 30080), tcp(443, 30443)]);
    spec.ip_families = vec![IpFamily::Ipv4, IpFamily::Ipv6];
    spec.ip_family_policy = FamilyPolicy::RequireDualStack;
    spec
}

fn narrowed() -> ServiceSpec {
    let mut spec = dual();
    spec.ip_families = vec![IpFamily::Ipv4];
    spec.ip_family_policy = FamilyPolicy::SingleStack;
    spec
}

/// The objects of the Service `uid`, their VIPs of both families and its
/// claims.
fn state(sim: &Sim, uid: &str) -> BTreeSet<String> {
    let objects = objects_of(sim, uid)
        .into_iter()
        .map(|o| format!("{} {}", o.kind, o.name));
    let vips = vips_of(sim, uid)
        .into_iter()
        .map(|(v4, v6)| format!("vips {v4:?} {v6:?}"));
    let claims = allocations(sim)
        .into_iter()
        .filter(|(_, tag)| tag.contains(&format!("uid={uid}")))
        .map(|(value, _)| format!("claim {value}"));
    objects.chain(vips).chain(claims).collect()
}

/// One operation on IP blocks or IP Spaces.
struct DualStack {
    spaces: bool,
    op: Op,
}

impl CrashCase for DualStack {
    type State = BTreeSet<String>;

    /// Another cluster's dual-stack Service, and ours unless the operation
    /// creates it.
    async fn world(&self) -> CrashWorld {
        let sim = vcd::sim_from(if self.spaces {
            dual_stack::spaces()
        } else {
            dual_stack::blocks()
        })
        .await;
        let config = config(CLUSTER, ModeKind::SharedVip);
        let mut foreign = dual();
        foreign.uid = FOREIGN.into();
        foreign.ports = vec![tcp(80, 31080)];
        other_cluster_engine(&sim, config.clone())
            .await
            .ensure(&foreign, &nodes(1))
            .await
            .expect("another cluster's Service");
        let journal: Arc<dyn AllocationJournal> = Arc::new(MemoryJournal::default());
        let lb = engine_with_journal(&sim, &config, journal.clone()).await;
        if !matches!(self.op, Op::Create) {
            let status = lb.ensure(&dual(), &nodes(2)).await.expect("the Service");
            assert_eq!(status.ingress.len(), 2, "an address per family");
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
            Op::Create => lb.ensure(&dual(), &nodes(2)).await.map(drop),
            Op::Narrow => lb.ensure(&narrowed(), &nodes(2)).await.map(drop),
            Op::Delete => lb.delete(&dual()).await,
            Op::Sweep => lb.sweep(&HashSet::new()).await.map(drop),
        };
        done.map_err(|e| e.to_string())
    }

    fn ours(&self, sim: &Sim) -> Self::State {
        state(sim, UID)
    }

    fn foreign(&self, sim: &Sim) -> Self::State {
        state(sim, FOREIGN)
    }
}

async fn every_step(name: &str, spaces: bool) {
    println!("| source | operation | writes | runs |\n|---|---|---|---|");
    for op in [Op::Create, Op::Narrow, Op::Delete, Op::Sweep] {
        let writes = every_write(&format!("{name} {op:?}"), &DualStack { spaces, op }).await;
        println!("| {name} | {op:?} | {writes} | {} |", 2 * writes);
    }
}

#[tokio::test]
async fn dual_stack_on_ip_blocks_survives_a_crash_or_lost_answer_at_every_write() {
    every_step("IP blocks", false).await;
}

#[tokio::test]
async fn dual_stack_on_ip_spaces_survives_a_crash_or_lost_answer_at_every_write() {
    every_step("IP Spaces", true).await;
}

//! Nothing lost at any step: for each of the four address/exposure modes and
//! each operation (create, port added, port removed, address change, a Node
//! joining, a move to `externalTrafficPolicy: Local` and back, client-IP
//! persistence turned on, HTTP rules added, a Service created with HTTP
//! rules, a move to another service engine group, a Node leaving with a
//! drain period (its member disabled), delete; the member,
//! persistence, rule and group changes in shared VIP mode, as they write
//! the same objects in every mode; a move to an internal address and back
//! in one-arm mode on IP blocks, where DNAT rules go and come, and on IP
//! Spaces, where the allocation is released and made; on IP Spaces the
//! address kept past the Service turned on and a delete that keeps it;
//! at API 39.1 tuned monitors turned on, retuned (a new shared monitor, the
//! old one deleted) and deleted with their Service, and a `Local` Service
//! probing its `healthCheckNodePort`),
//! every VCD write the
//! operation makes is hit in turn by a crash
//! before it lands (an error) and by a lost answer after it landed (vcdsim's
//! `loseAnswer`). A restarted engine then repeats the operation: it must
//! converge to exactly what an undisturbed run leaves (same objects, same
//! external address, same IP Space allocations), and another cluster's
//! Service and someone's unused IP Space reservation stay untouched.
//!
//! `cargo test --test it lb_crash_matrix -- --nocapture` prints the steps covered.

use std::collections::BTreeSet;
use std::sync::Arc;

use vcd_ccm::lb::{AllocationJournal, LbConfig, LoadBalancers, ServiceSpec};
use vcd_ccm::policy::model::{SessionAffinity, TrafficPolicy};
use vcdsim::{FaultAction, FaultRule, Scenario, Sim};

use crate::support::crash::{crash_before, engine_with_journal, writes_in_order};
use crate::support::faults::assert_fired;
use crate::support::lb::*;
use crate::support::vcd;

const UID: &str = "uid-matrix";
const FOREIGN_UID: &str = "uid-foreign";

#[derive(Debug, Clone, Copy)]
enum Op {
    Create,
    PortAdded,
    PortRemoved,
    AddressChange,
    NodeJoined,
    BecameLocal,
    BackToCluster,
    PersistenceOn,
    RulesOn,
    CreatedWithRules,
    EngineGroupMoved,
    NodeLeftDraining,
    BecameInternal,
    BecameExternal,
    RetainOn,
    RetainedDelete,
    MonitorTuned,
    MonitorRetuned,
    ProbedLocal,
    TunedDelete,
    Delete,
}

const OPS: [Op; 5] = [
    Op::Create,
    Op::PortAdded,
    Op::PortRemoved,
    Op::AddressChange,
    Op::Delete,
];

/// Member, persistence, rule and group changes write the same objects
/// whatever the address mode: they run in the shared VIP mode only.
const MEMBER_OPS: [Op; 12] = [
    Op::NodeJoined,
    Op::BecameLocal,
    Op::BackToCluster,
    Op::PersistenceOn,
    Op::RulesOn,
    Op::CreatedWithRules,
    Op::EngineGroupMoved,
    Op::NodeLeftDraining,
    Op::MonitorTuned,
    Op::MonitorRetuned,
    Op::ProbedLocal,
    Op::TunedDelete,
];

/// Moves between an internal and an external address.
const INTERNAL_OPS: [Op; 2] = [Op::BecameInternal, Op::BecameExternal];

fn ops_of(mode: Mode) -> Vec<Op> {
    let mut ops = OPS.to_vec();
    if matches!(mode.kind, ModeKind::SharedVip) && !mode.spaces {
        ops.extend(MEMBER_OPS);
    }
    if matches!(mode.kind, ModeKind::OneArm) || mode.spaces {
        ops.extend(INTERNAL_OPS);
    }
    if mode.spaces {
        ops.extend([Op::RetainOn, Op::RetainedDelete]);
    }
    ops
}

fn retaining(mut spec: ServiceSpec) -> ServiceSpec {
    spec.annotations
        .insert("vcd-ccm.io/retain-address".into(), "true".into());
    spec
}

/// The internal range of the shared VIP modes (one-arm ones use theirs).
const INTERNAL_RANGE: (&str, &str) = ("10.20.0.10", "10.20.0.50");

fn internal(mut spec: ServiceSpec) -> ServiceSpec {
    spec.annotations
        .insert("vcd-ccm.io/internal".into(), "true".into());
    spec
}

/// The Nodes serving the Service when the operation runs.
fn nodes_of(op: Op) -> usize {
    match op {
        Op::NodeJoined => 3,
        _ => 2,
    }
}

/// The Nodes serving the Service before the operation.
fn nodes_before(op: Op) -> usize {
    match op {
        Op::NodeLeftDraining => 3,
        _ => 2,
    }
}

/// `spec` with a drain period longer than the test.
fn draining(mut spec: ServiceSpec) -> ServiceSpec {
    spec.annotations
        .insert("vcd-ccm.io/drain-period".into(), "10m".into());
    spec
}

/// `spec` with its ports' monitors tuned (API 39.1: tenant monitors).
fn tuned(mut spec: ServiceSpec, interval: &str) -> ServiceSpec {
    spec.annotations
        .insert("vcd-ccm.io/health-check-interval".into(), interval.into());
    spec
}

/// A `Local` Service whose pools probe its `healthCheckNodePort`.
fn probed(mut spec: ServiceSpec) -> ServiceSpec {
    spec.health_check_node_port = Some(32000);
    local(spec)
}

fn local(mut spec: ServiceSpec) -> ServiceSpec {
    spec.external_traffic_policy = TrafficPolicy::Local;
    spec
}

fn sticky(mut spec: ServiceSpec) -> ServiceSpec {
    spec.session_affinity = SessionAffinity::ClientIp(300);
    spec
}

#[derive(Debug, Clone, Copy)]
struct Mode {
    name: &'static str,
    kind: ModeKind,
    spaces: bool,
    /// An address of the pool to move to.
    other_ip: &'static str,
}

fn scenario(mode: Mode) -> Scenario {
    if mode.spaces {
        spaces_scenario()
    } else {
        blocks_scenario()
    }
}

fn two_ports() -> ServiceSpec {
    service("shop", "web", UID, vec![tcp(80, 30080), tcp(443, 30443)])
}

/// HTTP on 80, HTTPS on 443 with a library certificate.
fn web_ports() -> ServiceSpec {
    let mut spec = two_ports();
    spec.ports[0].app_protocol = Some("http".into());
    spec.ports[1].app_protocol = Some("https".into());
    for (key, value) in [
        ("service.beta.kubernetes.io/vcloud-avi-ssl-ports", "443"),
        (
            "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias",
            "my-cert",
        ),
    ] {
        spec.annotations.insert(key.into(), value.into());
    }
    spec
}

/// `spec` with HTTP rules: a redirect and forwarded headers on the HTTP
/// virtual service, forwarded headers and HSTS on the HTTPS one.
fn with_rules(mut spec: ServiceSpec) -> ServiceSpec {
    for (key, value) in [
        ("vcd-ccm.io/https-redirect", "true"),
        ("vcd-ccm.io/forwarded-headers", "true"),
        ("vcd-ccm.io/hsts", "max-age=600"),
    ] {
        spec.annotations.insert(key.into(), value.into());
    }
    spec
}

fn one_port() -> ServiceSpec {
    service("shop", "web", UID, vec![tcp(80, 30080)])
}

/// (Service before, Service the operation ensures or deletes).
fn specs(op: Op, mode: Mode) -> (Option<ServiceSpec>, ServiceSpec) {
    match op {
        Op::Create => (None, two_ports()),
        Op::PortAdded => (Some(one_port()), two_ports()),
        Op::PortRemoved => (Some(two_ports()), one_port()),
        Op::AddressChange => {
            let mut moved = two_ports();
            moved.load_balancer_ip = Some(mode.other_ip.into());
            (Some(two_ports()), moved)
        }
        Op::NodeJoined => (Some(two_ports()), two_ports()),
        Op::BecameLocal => (Some(two_ports()), local(two_ports())),
        Op::BackToCluster => (Some(local(two_ports())), two_ports()),
        Op::PersistenceOn => (Some(two_ports()), sticky(two_ports())),
        Op::RulesOn => (Some(web_ports()), with_rules(web_ports())),
        Op::CreatedWithRules => (None, with_rules(web_ports())),
        Op::NodeLeftDraining => (Some(draining(two_ports())), draining(two_ports())),
        Op::BecameInternal => (Some(two_ports()), internal(two_ports())),
        Op::BecameExternal => (Some(internal(two_ports())), two_ports()),
        Op::RetainOn => (Some(two_ports()), retaining(two_ports())),
        Op::RetainedDelete => (Some(retaining(two_ports())), retaining(two_ports())),
        Op::MonitorTuned => (Some(two_ports()), tuned(two_ports(), "5s")),
        Op::MonitorRetuned => (Some(tuned(two_ports(), "5s")), tuned(two_ports(), "7s")),
        Op::ProbedLocal => (Some(two_ports()), probed(two_ports())),
        Op::TunedDelete => (Some(tuned(two_ports(), "5s")), two_ports()),
        Op::EngineGroupMoved => {
            let mut moved = two_ports();
            moved
                .annotations
                .insert("vcd-ccm.io/service-engine-group".into(), GOLD.into());
            (Some(two_ports()), moved)
        }
        Op::Delete => (Some(two_ports()), two_ports()),
    }
}

/// A virtual service's request, response and security rule names.
type RuleNames = [Vec<String>; 3];

/// What the gateway and the IP Spaces hold of the Service, for comparing
/// runs, and someone's reservation.
#[derive(Debug, PartialEq, Eq)]
struct State {
    ours: BTreeSet<(String, String, String)>,
    /// Every member IP set: name and entries.
    groups: BTreeSet<(String, String)>,
    /// Each pool's persistence type, by pool name.
    persistence: BTreeSet<(String, String)>,
    /// Each virtual service's rule names, per list.
    rules: BTreeSet<(String, RuleNames)>,
    /// The service engine group each virtual service runs on.
    engine_groups: BTreeSet<(String, String)>,
    /// Every listed pool member: pool, address, enabled.
    members: BTreeSet<(String, String, bool)>,
    /// The Service's allocations: address and claim marker.
    allocations: BTreeSet<(String, String)>,
    /// Every tenant monitor: name, interval, and the pools assigned it.
    monitors: BTreeSet<(String, Option<i64>, BTreeSet<String>)>,
    reservations: Vec<(String, String)>,
}

fn state(sim: &Sim, reserved: &str) -> State {
    State {
        ours: objects_of(sim, UID)
            .into_iter()
            .map(|o| (o.kind.to_string(), o.name, o.address))
            .collect(),
        groups: member_sets(sim)
            .into_iter()
            .map(|o| (o.name, o.address))
            .collect(),
        persistence: sim.with_world(|w| {
            w.pools
                .iter()
                .filter_map(|p| {
                    let profile = p.persistence_profile.as_ref()?;
                    Some((p.name.clone(), profile.profile_type.clone()))
                })
                .collect()
        }),
        rules: sim.with_world(|w| {
            w.http_policies
                .iter()
                .filter_map(|p| {
                    let vs = w
                        .virtual_services
                        .iter()
                        .find(|v| v.id.as_ref() == Some(&p.virtual_service_id))?;
                    Some((
                        vs.name.clone(),
                        [
                            p.request_rules.iter().map(|r| r.name.clone()).collect(),
                            p.response_rules.iter().map(|r| r.name.clone()).collect(),
                            p.security_rules.iter().map(|r| r.name.clone()).collect(),
                        ],
                    ))
                })
                .collect()
        }),
        engine_groups: sim.with_world(|w| {
            w.virtual_services
                .iter()
                .map(|vs| {
                    let group = w
                        .service_engine_groups
                        .iter()
                        .find(|g| g.id == vs.service_engine_group_ref.id)
                        .map_or_else(String::new, |g| g.name.clone());
                    (vs.name.clone(), group)
                })
                .collect()
        }),
        members: pool_members(sim),
        monitors: sim.with_world(|w| {
            w.health_monitors
                .iter()
                .filter(|m| !m.is_system())
                .map(|m| {
                    let pools = w
                        .monitor_assignments
                        .iter()
                        .filter(|a| a.monitor_id == m.id())
                        .filter_map(|a| {
                            w.pools.iter().find(|p| p.id.as_deref() == Some(&a.pool_id))
                        })
                        .map(|p| p.name.clone())
                        .collect();
                    (m.name().to_string(), m.body.send_interval, pools)
                })
                .collect()
        }),
        allocations: allocations(sim)
            .into_iter()
            .filter(|(_, d)| d.contains(UID))
            .collect(),
        reservations: allocations(sim)
            .into_iter()
            .filter(|(v, _)| v == reserved)
            .collect(),
    }
}

/// A world with another cluster's Service and, on IP Spaces, an address
/// someone reserved; then the Service as it was before the operation.
/// Returns the engine, the journal its Services keep, the reserved address
/// and the Service's reported address.
struct World {
    sim: Sim,
    lb: LoadBalancers,
    journal: Arc<dyn AllocationJournal>,
    reserved: String,
    reported: Option<String>,
    config: LbConfig,
}

/// A second service engine group on the gateway, after `seg1`.
const GOLD: &str = "gold-seg";

async fn world(mode: Mode, before: Option<&ServiceSpec>, before_nodes: usize) -> World {
    let sim = vcd::sim_from(scenario(mode)).await;
    add_engine_group(&sim, GOLD, 10);
    let mut config = config(CLUSTER, mode.kind);
    if matches!(mode.kind, ModeKind::SharedVip) {
        let (first, last) = INTERNAL_RANGE;
        config.internal = vec![(first.parse().unwrap(), last.parse().unwrap())];
    }
    let other = other_cluster_engine(&sim, config.clone()).await;
    let foreign = service("shop", "web", FOREIGN_UID, vec![tcp(80, 31080)]);
    other
        .ensure(&foreign, &nodes(1))
        .await
        .expect("another cluster's Service");
    let mut reserved = String::new();
    if mode.spaces {
        let space = sim.with_world(|w| w.ip_spaces[0].id.clone());
        reserved = client(&sim)
            .await
            .ip_spaces()
            .allocate_floating_ip(&space, None)
            .await
            .expect("a reservation")
            .value;
    }
    let journal: Arc<dyn AllocationJournal> = Arc::new(MemoryJournal::default());
    let lb = engine_with_journal(&sim, &config, journal.clone()).await;
    let mut reported = None;
    if let Some(before) = before {
        let status = lb
            .ensure(before, &nodes(before_nodes))
            .await
            .expect("the Service before");
        reported = Some(status.ingress[0].ip.clone());
    }
    sim.reset_log();
    World {
        sim,
        lb,
        journal,
        reserved,
        reported,
        config,
    }
}

/// Runs the operation as the service controller would: the status the
/// Service reports is the last address it was given.
async fn run(
    lb: &LoadBalancers,
    op: Op,
    spec: &ServiceSpec,
    reported: &Option<String>,
) -> Result<(), String> {
    let mut spec = spec.clone();
    spec.reported_ips = reported.iter().cloned().collect();
    match op {
        Op::Delete | Op::RetainedDelete | Op::TunedDelete => {
            lb.delete(&spec).await.map_err(|e| e.to_string())
        }
        _ => lb
            .ensure(&spec, &nodes(nodes_of(op)))
            .await
            .map(drop)
            .map_err(|e| e.to_string()),
    }
}

/// The writes an undisturbed run of `op` makes, as (method, route, occurrence).
async fn writes_of(mode: Mode, op: Op) -> (Vec<(String, String, u32)>, State) {
    let (before, spec) = specs(op, mode);
    let w = world(mode, before.as_ref(), nodes_before(op)).await;
    run(&w.lb, op, &spec, &w.reported)
        .await
        .expect("an undisturbed run");
    (writes_in_order(&w.sim), state(&w.sim, &w.reserved))
}

async fn every_step(mode: Mode) -> Vec<String> {
    let mut rows = Vec::new();
    for op in ops_of(mode) {
        let (writes, expected) = writes_of(mode, op).await;
        assert!(!writes.is_empty(), "{mode:?} {op:?} writes");
        for (method, route, occurrence) in &writes {
            for action in [crash_before(), FaultAction::LoseAnswer] {
                let step = format!(
                    "{} {op:?}: {action:?} at {method} {route} #{occurrence}",
                    mode.name
                );
                let (before, spec) = specs(op, mode);
                let w = world(mode, before.as_ref(), nodes_before(op)).await;
                w.sim.add_fault(
                    FaultRule::new(Some(method), route, action)
                        .skip(*occurrence)
                        .times(1),
                );
                let foreign = objects_of(&w.sim, FOREIGN_UID);
                let disturbed = run(&w.lb, op, &spec, &w.reported).await;
                assert_fired(
                    &w.sim,
                    &format!("{step} (the disturbed run gave {disturbed:?})"),
                );
                drop(w.lb);
                let restarted = engine_with_journal(&w.sim, &w.config, w.journal.clone()).await;
                run(&restarted, op, &spec, &w.reported)
                    .await
                    .unwrap_or_else(|e| panic!("{step}: the restarted engine fails: {e}"));
                assert_eq!(state(&w.sim, &w.reserved), expected, "{step}");
                assert_eq!(
                    objects_of(&w.sim, FOREIGN_UID),
                    foreign,
                    "{step}: another cluster's"
                );
                w.sim.reset_log();
                run(&restarted, op, &spec, &w.reported).await.unwrap();
                assert_eq!(
                    calls(&w.sim).1,
                    0,
                    "{step}: not converged:\n{}",
                    call_lines(&w.sim)
                );
            }
        }
        rows.push(format!(
            "| {} | {op:?} | {} | {} |",
            mode.name,
            writes.len(),
            2 * writes.len()
        ));
    }
    rows
}

fn print(rows: &[String]) {
    println!("| mode | operation | writes | runs (crash before, answer lost after) |");
    println!("|---|---|---|---|");
    for row in rows {
        println!("{row}");
    }
}

#[tokio::test]
async fn shared_vip_survives_a_crash_or_lost_answer_at_every_write() {
    print(
        &every_step(Mode {
            name: "shared VIP",
            kind: ModeKind::SharedVip,
            spaces: false,
            other_ip: "203.0.113.99",
        })
        .await,
    );
}

#[tokio::test]
async fn one_arm_survives_a_crash_or_lost_answer_at_every_write() {
    print(
        &every_step(Mode {
            name: "one-arm",
            kind: ModeKind::OneArm,
            spaces: false,
            other_ip: "203.0.113.99",
        })
        .await,
    );
}

#[tokio::test]
async fn shared_vip_one_arm_survives_a_crash_or_lost_answer_at_every_write() {
    print(
        &every_step(Mode {
            name: "shared VIP + one-arm",
            kind: ModeKind::SharedVipOneArm,
            spaces: false,
            other_ip: "203.0.113.99",
        })
        .await,
    );
}

#[tokio::test]
async fn ip_spaces_survive_a_crash_or_lost_answer_at_every_write() {
    print(
        &every_step(Mode {
            name: "IP Spaces (shared VIP)",
            kind: ModeKind::SharedVip,
            spaces: true,
            other_ip: "192.0.2.27",
        })
        .await,
    );
}

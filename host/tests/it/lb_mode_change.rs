//! A change of load-balancer mode (shared VIP, shared VIP + one-arm,
//! one-arm) converges every Service to the new mode at its next reconcile:
//! the Service's objects are found in every family whatever the mode, so
//! the DNAT rules of a NAT mode go when the new one has none, and the
//! external address stays.

use crate::support::lb::*;
use crate::support::vcd;
use vcdsim::Sim;

const MODES: [ModeKind; 3] = [
    ModeKind::SharedVip,
    ModeKind::SharedVipOneArm,
    ModeKind::OneArm,
];
const UID: &str = "uid-web";

fn kinds(sim: &Sim) -> (usize, usize, usize) {
    let ours = objects_of(sim, UID);
    let of = |kind: &str| ours.iter().filter(|o| o.kind == kind).count();
    (of("virtual service"), of("pool"), of("nat rule"))
}

/// The external address as the mode exposes it: the DNAT rules' in NAT
/// modes, the virtual services' otherwise.
fn external(sim: &Sim, mode: ModeKind) -> Vec<String> {
    let kind = match mode {
        ModeKind::SharedVip => "virtual service",
        _ => "nat rule",
    };
    let mut addresses: Vec<String> = objects_of(sim, UID)
        .into_iter()
        .filter(|o| o.kind == kind)
        .map(|o| o.address)
        .collect();
    addresses.dedup();
    addresses
}

async fn change(from: ModeKind, to: ModeKind, spaces: bool) {
    let sim = match spaces {
        true => vcd::sim_from(spaces_scenario()).await,
        false => vcd::sim_from(blocks_scenario()).await,
    };
    let svc = web_service("shop", "web", UID);
    let before = engine(&sim, config(CLUSTER, from))
        .await
        .ensure(&svc, &nodes(2))
        .await
        .unwrap_or_else(|e| panic!("{from:?}: {e}"));
    let ip = before.ingress[0].ip.clone();
    let mut reported = svc.clone();
    reported.reported_ips = vec![ip.clone()];

    // A new process with the new mode, as a config change restarts it.
    let lb = engine(&sim, config(CLUSTER, to)).await;
    let after = lb
        .ensure(&reported, &nodes(2))
        .await
        .unwrap_or_else(|e| panic!("{from:?} -> {to:?}: {e}"));
    let case = format!("{from:?} -> {to:?} (spaces {spaces})");
    assert_eq!(after.ingress[0].ip, ip, "{case}: the address stays");
    let nat = if to == ModeKind::SharedVip { 0 } else { 2 };
    assert_eq!(
        kinds(&sim),
        (2, 2, nat),
        "{case}: {:#?}",
        objects_of(&sim, UID)
    );
    assert_eq!(external(&sim, to), vec![ip.clone()], "{case}");

    // Converged: nothing more to write.
    sim.reset_log();
    lb.ensure(&reported, &nodes(2)).await.unwrap();
    assert_eq!(
        calls(&sim).1,
        0,
        "{case}: writes after converging\n{}",
        call_lines(&sim)
    );

    lb.delete(&reported).await.unwrap();
    assert!(
        objects_of(&sim, UID).is_empty(),
        "{case}: {:#?}",
        objects_of(&sim, UID)
    );
    if spaces {
        assert!(
            allocations(&sim).is_empty(),
            "{case}: {:?}",
            allocations(&sim)
        );
    }
}

#[tokio::test]
async fn every_mode_change_converges_on_ip_blocks() {
    for from in MODES {
        for to in MODES.into_iter().filter(|to| *to != from) {
            change(from, to, false).await;
        }
    }
}

#[tokio::test]
async fn every_mode_change_converges_on_ip_spaces() {
    for from in MODES {
        for to in MODES.into_iter().filter(|to| *to != from) {
            change(from, to, true).await;
        }
    }
}

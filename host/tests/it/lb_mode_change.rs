//! A change of load-balancer mode (shared VIP, shared VIP + one-arm,
//! one-arm) converges every Service to the new mode at its next reconcile:
//! the Service's objects are found in every family whatever the mode, so
//! the DNAT rules of a NAT mode go when the new one has none, and the
//! external address stays (a dual-stack Service keeps its IPv4 one where
//! the new mode cannot serve IPv6).

use crate::support::dual_stack;
use crate::support::lb::*;
use crate::support::vcd;
use vcd_ccm::lb::FamilyPolicy;
use vcd_ccm::policy::model::IpFamily;
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

/// A dual-stack Service that prefers IPv6 first, moved to one-arm mode,
/// where IPv6 cannot be served: it moves off its IPv6 address to an IPv4
/// one behind DNAT, its IPv6 claim is released, and it is told why.
async fn dual_stack_to_one_arm(spaces: bool) {
    let sim = match spaces {
        true => vcd::sim_from(dual_stack::spaces()).await,
        false => vcd::sim_from(dual_stack::blocks()).await,
    };
    let mut svc = service("shop", "web", UID, vec![tcp(80, 30080)]);
    svc.ip_families = vec![IpFamily::Ipv6, IpFamily::Ipv4];
    svc.ip_family_policy = FamilyPolicy::PreferDualStack;
    let before = engine(&sim, config(CLUSTER, ModeKind::SharedVip))
        .await
        .ensure(&svc, &nodes(2))
        .await
        .expect("dual-stack in shared VIP mode");
    let ips: Vec<String> = before.ingress.iter().map(|i| i.ip.clone()).collect();
    assert!(ips.len() == 2 && ips[0].contains(':'), "{ips:?}");

    let mut reported = svc.clone();
    reported.reported_ips = ips.clone();
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVipOneArm)).await;
    let after = lb.ensure(&reported, &nodes(2)).await.expect("one-arm");
    let now: Vec<String> = after.ingress.iter().map(|i| i.ip.clone()).collect();
    assert_eq!(now, vec![ips[1].clone()], "the IPv4 address stays, alone");
    assert!(
        after
            .dual_stack_not_served
            .as_deref()
            .is_some_and(|why| why.contains("one-arm mode translates IPv4 only")),
        "{:?}",
        after.dual_stack_not_served
    );
    assert_eq!(
        external(&sim, ModeKind::SharedVipOneArm),
        vec![ips[1].clone()]
    );
    assert!(
        dual_stack::vips_of(&sim, UID)
            .iter()
            .all(|(_, v6)| v6.is_none()),
        "no IPv6 VIP is left"
    );
    if spaces {
        let claims: Vec<String> = allocations(&sim).into_iter().map(|(ip, _)| ip).collect();
        assert_eq!(claims, vec![ips[1].clone()], "the IPv6 claim is released");
    }
    lb.ensure(&reported, &nodes(2)).await.expect("a repeat");
}

#[tokio::test]
async fn a_dual_stack_service_keeps_its_ipv4_address_in_one_arm_mode_on_ip_blocks() {
    dual_stack_to_one_arm(false).await;
}

#[tokio::test]
async fn a_dual_stack_service_keeps_its_ipv4_address_in_one_arm_mode_on_ip_spaces() {
    dual_stack_to_one_arm(true).await;
}

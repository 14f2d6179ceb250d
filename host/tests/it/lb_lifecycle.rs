//! Every mode × address source through a Service's life: create, no-op
//! re-ensure, port add and remove, node add and remove, certificate change,
//! address change, delete. After delete nothing of ours is left and IP
//! Space allocations are released.

use crate::support::lb::*;
use crate::support::vcd;
use vcd_ccm::lb::LbStatus;
use vcdsim::Sim;

const UID: &str = "uid-web-1";

fn count(objects: &[Object], kind: &str) -> usize {
    objects.iter().filter(|o| o.kind == kind).count()
}

fn expect_objects(sim: &Sim, mode: ModeKind, ports: usize) {
    let ours = objects_of(sim, UID);
    assert_eq!(count(&ours, "virtual service"), ports, "{ours:#?}");
    assert_eq!(count(&ours, "pool"), ports, "{ours:#?}");
    let nat = if mode == ModeKind::SharedVip {
        0
    } else {
        ports
    };
    assert_eq!(count(&ours, "nat rule"), nat, "{ours:#?}");
}

/// The object writes of a 2-port create: pools and virtual services, and
/// DNAT rules in NAT modes.
/// The first Service's writes: the cluster's member IP set, then a pool
/// and a virtual service per port (and a DNAT rule in one-arm modes).
fn expected_writes(mode: ModeKind) -> usize {
    match mode {
        ModeKind::SharedVip => 5,
        _ => 7,
    }
}

/// The external address every object of ours agrees on.
fn external_address(sim: &Sim, mode: ModeKind) -> String {
    let kind = if mode == ModeKind::SharedVip {
        "virtual service"
    } else {
        "nat rule"
    };
    let addresses: std::collections::BTreeSet<String> = objects_of(sim, UID)
        .into_iter()
        .filter(|o| o.kind == kind)
        .map(|o| o.address)
        .collect();
    assert_eq!(addresses.len(), 1, "one external address: {addresses:?}");
    addresses.into_iter().next().unwrap_or_default()
}

fn pool_members(sim: &Sim) -> Vec<usize> {
    sim.with_world(|w| {
        w.pools
            .iter()
            .filter(|p| p.description.as_deref().is_some_and(|d| d.contains(UID)))
            .map(|p| w.pool_member_ips(p).len())
            .collect()
    })
}

fn certificate_of_tls_port(sim: &Sim) -> Option<String> {
    sim.with_world(|w| {
        w.virtual_services
            .iter()
            .find(|vs| vs.name.ends_with("-tcp-443"))
            .and_then(|vs| vs.certificate_ref.as_ref())
            .map(|c| c.name.clone())
    })
}

async fn lifecycle(mode: ModeKind, spaces: bool) {
    let sim = if spaces {
        vcd::sim_from(spaces_scenario()).await
    } else {
        vcd::sim_from(blocks_scenario()).await
    };
    let lb = engine(&sim, config(CLUSTER, mode)).await;
    let mut svc = web_service("shop", "web", UID);

    // Create.
    let status = lb.ensure(&svc, &nodes(2)).await.expect("create");
    let ip = status.ingress[0].ip.clone();
    assert_eq!(status.ingress[0].ip_mode.status_value(), "Proxy");
    expect_objects(&sim, mode, 2);
    assert_eq!(external_address(&sim, mode), ip);
    // On an IP Space the address is allocated (and claimed) first.
    let allocation = usize::from(spaces);
    assert_eq!(
        status.changes.len(),
        expected_writes(mode) + allocation,
        "{status:?}"
    );
    let found = lb.get(&svc).await.unwrap().expect("a load balancer");
    assert_eq!(found.ingress, status.ingress);
    if spaces {
        let claimed: Vec<_> = allocations(&sim)
            .into_iter()
            .filter(|(_, d)| d.contains(UID))
            .collect();
        assert_eq!(claimed.len(), 1, "{claimed:?}");
        assert_eq!(claimed[0].0, ip);
    }

    // No-op re-ensure: no write at all.
    sim.reset_log();
    let converged = LbStatus {
        changes: Vec::new(),
        ..status.clone()
    };
    assert_eq!(lb.ensure(&svc, &nodes(2)).await.unwrap(), converged);
    assert_eq!(calls(&sim).1, 0, "no-op writes:\n{}", call_lines(&sim));

    // Port added, then removed: the same address throughout.
    svc.ports.push(udp(5353, 30053));
    assert_eq!(
        lb.ensure(&svc, &nodes(2)).await.unwrap().ingress,
        status.ingress
    );
    expect_objects(&sim, mode, 3);
    svc.ports.pop();
    assert_eq!(
        lb.ensure(&svc, &nodes(2)).await.unwrap().ingress,
        status.ingress
    );
    expect_objects(&sim, mode, 2);

    // Nodes added and removed: pool members only, no virtual service write.
    sim.reset_log();
    lb.update(&svc, &nodes(3)).await.unwrap();
    assert_eq!(pool_members(&sim), vec![3, 3]);
    let vs_writes = sim.count("PUT /cloudapi/1.0.0/loadBalancer/virtualServices/{id}")
        + sim.count("POST /cloudapi/1.0.0/loadBalancer/virtualServices");
    assert_eq!(vs_writes, 0, "{}", call_lines(&sim));
    lb.update(&svc, &nodes(1)).await.unwrap();
    assert_eq!(pool_members(&sim), vec![1, 1]);

    // Certificate changed by annotation: reaches the existing virtual service.
    assert_eq!(certificate_of_tls_port(&sim).as_deref(), Some("my-cert"));
    svc.annotations
        .insert(CERT_ALIAS.into(), "other-cert".into());
    lb.ensure(&svc, &nodes(1)).await.unwrap();
    assert_eq!(certificate_of_tls_port(&sim).as_deref(), Some("other-cert"));

    // Requested address changed.
    let wanted = if spaces {
        "192.0.2.27"
    } else {
        "203.0.113.245"
    };
    svc.load_balancer_ip = Some(wanted.into());
    let moved = lb.ensure(&svc, &nodes(1)).await.expect("address change");
    assert_eq!(moved.ingress[0].ip, wanted);
    assert_eq!(external_address(&sim, mode), wanted);
    expect_objects(&sim, mode, 2);
    if spaces {
        let claimed: Vec<_> = allocations(&sim)
            .into_iter()
            .filter(|(_, d)| d.contains(UID))
            .collect();
        assert_eq!(
            claimed.len(),
            1,
            "the old allocation is released: {claimed:?}"
        );
        assert_eq!(claimed[0].0, wanted);
    }

    // Delete: nothing of ours left, allocations released.
    lb.delete(&svc).await.unwrap();
    assert!(
        objects_of(&sim, UID).is_empty(),
        "{:#?}",
        objects_of(&sim, UID)
    );
    assert!(allocations(&sim).iter().all(|(_, d)| !d.contains(UID)));
    if spaces {
        assert!(allocations(&sim).is_empty(), "{:?}", allocations(&sim));
    }
    assert_eq!(lb.get(&svc).await.unwrap(), None);
    // Deleting again is a no-op.
    lb.delete(&svc).await.unwrap();
}

#[tokio::test]
async fn shared_vip_with_ip_blocks() {
    lifecycle(ModeKind::SharedVip, false).await;
}

#[tokio::test]
async fn shared_vip_with_ip_spaces() {
    lifecycle(ModeKind::SharedVip, true).await;
}

#[tokio::test]
async fn shared_vip_one_arm_with_ip_blocks() {
    lifecycle(ModeKind::SharedVipOneArm, false).await;
}

#[tokio::test]
async fn shared_vip_one_arm_with_ip_spaces() {
    lifecycle(ModeKind::SharedVipOneArm, true).await;
}

#[tokio::test]
async fn one_arm_with_ip_blocks() {
    lifecycle(ModeKind::OneArm, false).await;
}

#[tokio::test]
async fn one_arm_with_ip_spaces() {
    lifecycle(ModeKind::OneArm, true).await;
}

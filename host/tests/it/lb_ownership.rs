//! Who owns what on a shared gateway: two Kubernetes clusters given the same
//! `clusterid`, objects written before cluster identities were recorded,
//! objects a later version wrote in a newer tag format, a changed
//! `clusterid`, an empty one, and deletes the role may not make.

use std::collections::HashSet;

use vcd_ccm::lb::{LbError, ServiceSpec};
use vcdsim::{FaultAction, FaultRule, Sim};

use crate::support::capture::Captured;
use crate::support::faults::assert_fired;
use crate::support::lb::*;
use crate::support::vcd;

/// Rewrites every tag as vcd-ccm wrote it before identities existed (and
/// before tag formats were numbered).
fn forget_identities(sim: &Sim) {
    let strip = |text: &mut String| {
        for word in [" kube=", " format="] {
            if let Some(start) = text.find(word) {
                let end = text[start + 1..]
                    .find(' ')
                    .map_or(text.len(), |i| start + 1 + i);
                text.replace_range(start..end, "");
            }
        }
    };
    sim.with_world(|w| {
        for vs in &mut w.virtual_services {
            vs.description.as_mut().map(strip);
        }
        for pool in &mut w.pools {
            pool.description.as_mut().map(strip);
        }
        for rule in &mut w.nat_rules {
            rule.body.description.as_mut().map(strip);
        }
        for allocation in &mut w.ip_allocations {
            strip(&mut allocation.description);
        }
    });
}

fn live(uids: &[&str]) -> HashSet<String> {
    uids.iter().map(|u| u.to_string()).collect()
}

#[tokio::test]
async fn two_clusters_with_one_clusterid_never_sweep_each_other() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let config = config(CLUSTER, ModeKind::SharedVipOneArm);
    let ours = engine(&sim, config.clone()).await;
    let theirs = other_cluster_engine(&sim, config).await;
    ours.ensure(&web_service("default", "web", "uid-ours"), &nodes(2))
        .await
        .unwrap();
    theirs
        .ensure(&web_service("default", "web", "uid-theirs"), &nodes(2))
        .await
        .unwrap();
    let before = (objects(&sim).len(), allocations(&sim).len());

    // Each cluster knows only its own Service.
    let report = ours.sweep(&live(&["uid-ours"])).await.unwrap();
    assert_eq!(report.objects + report.released, 0, "{report:?}");
    assert!(
        report.other_clusters.contains(OTHER_KUBE_SYSTEM_UID),
        "{report:?}"
    );
    let report = theirs.sweep(&live(&["uid-theirs"])).await.unwrap();
    assert_eq!(report.objects + report.released, 0, "{report:?}");
    assert!(report.other_clusters.contains(KUBE_SYSTEM_UID));
    assert_eq!((objects(&sim).len(), allocations(&sim).len()), before);

    // A Service that is really gone is still swept, by its own cluster only.
    let report = ours.sweep(&live(&[])).await.unwrap();
    assert_eq!((report.services.len(), report.released), (1, 1));
    assert_eq!(objects_of(&sim, "uid-theirs").len(), 6);
    assert!(objects_of(&sim, "uid-ours").is_empty());
}

#[tokio::test]
async fn objects_written_before_identities_are_adopted_and_never_swept() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVipOneArm)).await;
    let kept = web_service("default", "kept", "uid-kept");
    let ip = lb.ensure(&kept, &nodes(2)).await.unwrap().ingress[0]
        .ip
        .clone();
    lb.ensure(&web_service("default", "gone", "uid-gone"), &nodes(2))
        .await
        .unwrap();
    forget_identities(&sim);

    // After an upgrade (a new process), the live Service adopts its objects
    // and its claim: same address.
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVipOneArm)).await;
    let again = lb.ensure(&kept, &nodes(2)).await.unwrap();
    assert_eq!(again.ingress[0].ip, ip);
    let marker = format!("kube={KUBE_SYSTEM_UID} ");
    assert!(
        objects_of(&sim, "uid-kept")
            .iter()
            .all(|o| o.description.contains(&marker))
    );
    assert!(
        allocations(&sim)
            .iter()
            .any(|(value, description)| *value == ip && description.contains(&marker))
    );

    // The other one cannot be told from another cluster's: left alone.
    let report = lb.sweep(&live(&["uid-kept"])).await.unwrap();
    assert_eq!(report.objects + report.released, 0, "{report:?}");
    assert_eq!(report.unattributed, 7, "6 objects and a claim: {report:?}");
    assert_eq!(objects_of(&sim, "uid-gone").len(), 6);
}

#[tokio::test]
async fn a_changed_clusterid_is_reported_and_nothing_is_deleted() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let before = engine(&sim, config("NO_RDE_before", ModeKind::SharedVip)).await;
    before
        .ensure(&web_service("default", "web", "uid-1"), &nodes(2))
        .await
        .unwrap();
    let count = objects(&sim).len();
    let after = engine(&sim, config("NO_RDE_after", ModeKind::SharedVip)).await;
    let report = after.sweep(&live(&["uid-1"])).await.unwrap();
    assert_eq!(
        report.former_cluster_ids.iter().collect::<Vec<_>>(),
        ["NO_RDE_before"]
    );
    assert_eq!(report.objects, 0);
    assert_eq!(objects(&sim).len(), count);
    let report = after.sweep(&live(&[])).await.unwrap();
    assert_eq!((report.objects, objects(&sim).len()), (0, count));
}

#[tokio::test]
async fn an_empty_clusterid_works_as_upstream_allows() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let lb = engine(&sim, config("", ModeKind::OneArm)).await;
    let svc = web_service("default", "web", "uid-1");
    lb.ensure(&svc, &nodes(2)).await.unwrap();
    assert_eq!(objects_of_cluster(&sim, "").len(), 6);
    assert_eq!(
        lb.sweep(&live(&["uid-1"])).await.unwrap(),
        Default::default()
    );
    lb.delete(&svc).await.unwrap();
    assert!(objects(&sim).is_empty() && allocations(&sim).is_empty());
}

#[tokio::test]
async fn a_delete_the_role_may_not_make_fails_and_keeps_everything() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let svc = web_service("default", "web", "uid-1");
    lb.ensure(&svc, &nodes(2)).await.unwrap();
    sim.add_fault(FaultRule::new(
        Some("DELETE"),
        "/cloudapi/1.0.0/loadBalancer/virtualServices/{id}",
        FaultAction::Error {
            status: 403,
            minor_error_code: "ACCESS_TO_RESOURCE_IS_FORBIDDEN".into(),
            message: "Either you need some or all of the following rights [Base]".into(),
        },
    ));
    let error = lb.delete(&svc).await.unwrap_err().to_string();
    assert!(
        error.contains("still exists")
            && error.contains("Organization vDC Gateway: Configure Load Balancer"),
        "{error}"
    );
    assert_eq!(objects_of(&sim, "uid-1").len(), 4, "nothing reported gone");
    assert_fired(&sim, "403 on the virtual service's DELETE");
    lb.delete(&svc).await.unwrap();
    assert!(objects(&sim).is_empty());
}

#[tokio::test]
async fn a_403_for_an_object_already_gone_counts_as_deleted() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let client = client(&sim).await;
    sim.add_fault(FaultRule::new(
        Some("DELETE"),
        "/cloudapi/1.0.0/loadBalancer/pools/{id}",
        FaultAction::Error {
            status: 403,
            minor_error_code: "ACCESS_TO_RESOURCE_IS_FORBIDDEN".into(),
            message: "the target entity is invalid".into(),
        },
    ));
    let gateway = sim.with_world(|w| w.gateways[0].id.clone());
    client
        .pools()
        .delete(&gateway, "urn:vcloud:entity:vmware:loadBalancerPool:gone")
        .await
        .expect("a pool no one can read is gone");
    assert_fired(&sim, "403 on the pool's DELETE");
}

#[tokio::test]
async fn an_address_someone_reserved_is_not_taken() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVipOneArm)).await;
    let client = client(&sim).await;
    let space = sim.with_world(|w| w.ip_spaces[0].id.clone());
    let reserved = client
        .ip_spaces()
        .allocate_floating_ip(&space, None)
        .await
        .unwrap()
        .value;
    let mut svc = web_service("default", "web", "uid-1");
    svc.load_balancer_ip = Some(reserved.clone());
    let error = lb.ensure(&svc, &nodes(2)).await.unwrap_err().to_string();
    assert!(
        error.contains(&reserved) && error.contains("UNUSED"),
        "{error}"
    );
    assert!(objects(&sim).is_empty());
}

/// The process stops after VCD allocated the address and before the claim:
/// the allocation carries nothing of ours, only the journal knows it.
async fn allocated_then_stopped(sim: &Sim) -> (ServiceSpec, String) {
    let lb = engine(sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let svc = web_service("default", "web", "uid-journal");
    sim.add_fault(FaultRule::new(
        Some("POST"),
        "/cloudapi/1.0.0/ipSpaces/{id}/allocate",
        FaultAction::LoseAnswer,
    ));
    sim.add_fault(FaultRule::new(
        Some("PUT"),
        "/cloudapi/1.0.0/ipSpaces/{id}/allocations/{allocation}",
        FaultAction::Error {
            status: 503,
            minor_error_code: "INJECTED_CRASH".into(),
            message: "the process stops here".into(),
        },
    ));
    lb.ensure(&svc, &nodes(2)).await.unwrap_err();
    assert_fired(sim, "the allocation's answer lost, its claim refused");
    let unmarked: Vec<String> = allocations(sim)
        .into_iter()
        .filter(|(_, description)| description.is_empty())
        .map(|(value, _)| value)
        .collect();
    assert_eq!(unmarked.len(), 1, "{:?}", allocations(sim));
    (svc, unmarked[0].clone())
}

#[tokio::test]
async fn an_allocation_cut_off_before_its_claim_is_claimed_after_a_restart() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let (svc, allocated) = allocated_then_stopped(&sim).await;
    let restarted = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let status = restarted.ensure(&svc, &nodes(2)).await.unwrap();
    assert_eq!(status.ingress[0].ip, allocated);
    assert_eq!(allocations(&sim).len(), 1, "no second allocation");
}

#[tokio::test]
async fn an_allocation_cut_off_before_its_claim_is_released_with_the_service() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let (svc, _) = allocated_then_stopped(&sim).await;
    let restarted = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    restarted.delete(&svc).await.unwrap();
    assert!(allocations(&sim).is_empty(), "{:?}", allocations(&sim));
}

/// What a rollback finds: a later version's objects of a Service (and, on
/// IP Spaces, its claim), in tag format 99. This version, started on them,
/// sweeps, ensures (a create, or a drift repair), updates and deletes that
/// Service, and other Services want its address: nothing is written, each
/// refusal names the format, and each object is logged once.
async fn a_later_versions_objects_are_left_alone(
    sim: &Sim,
    mode: ModeKind,
    kinds: &[(&str, usize)],
    only_address: bool,
) {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(captured.clone())
        .finish();
    let _capture = tracing::subscriber::set_default(subscriber);
    let web = web_service("default", "web", "uid-later");
    let ip = engine(sim, config(CLUSTER, mode))
        .await
        .ensure(&web, &nodes(2))
        .await
        .unwrap()
        .ingress[0]
        .ip
        .clone();
    tag_in_a_later_format(sim, "uid-later");
    let before = (objects(sim), allocations(sim));

    // This version, started on them (its login is the only write).
    let lb = engine(sim, config(CLUSTER, mode)).await;
    sim.reset_log();
    let report = lb.sweep(&live(&[])).await.unwrap();
    assert_eq!(report.objects + report.released, 0, "{report:?}");
    let found: Vec<(&str, usize)> = report.newer_format.clone().into_iter().collect();
    assert_eq!(found, kinds, "{report:?}");
    let newer = |result: Result<(), LbError>| match result {
        Err(error @ LbError::NewerFormat { .. }) => error.to_string(),
        other => panic!("not refused for the newer format: {other:?}"),
    };
    let refusals = [
        newer(lb.ensure(&web, &nodes(2)).await.map(|_| ())),
        newer(lb.update(&web, &nodes(3)).await.map(drop)),
        newer(lb.delete(&web).await),
    ];
    lb.refresh_gateway().await.unwrap();
    newer(lb.ensure(&web, &nodes(2)).await.map(|_| ()));
    for refusal in &refusals {
        assert!(
            refusal
                .contains("carry an ownership tag of format 99, newer than this vcd-ccm knows (4)"),
            "{refusal}"
        );
    }
    // Its address is another owner's, asked for by value or not.
    let mut wants = web_service("default", "wants", "uid-wants");
    wants.load_balancer_ip = Some(ip.clone());
    let refused = lb.ensure(&wants, &nodes(1)).await.unwrap_err().to_string();
    assert!(
        refused.contains(&format!("address {ip} is already used"))
            && refused.contains("Service default/web of cluster NO_RDE_cluster-a, written by a newer vcd-ccm (tag format 99"),
        "{refused}"
    );
    // A Service picking from the pools gets another address, or none when
    // the later version's is the only one.
    let other = web_service("default", "other", "uid-other");
    match lb.ensure(&other, &nodes(1)).await {
        Ok(status) => {
            assert!(!only_address, "the only address was taken");
            assert_ne!(status.ingress[0].ip, ip);
            lb.delete(&other).await.unwrap();
            sim.reset_log();
        }
        Err(error) => assert!(
            only_address
                && error
                    .to_string()
                    .contains("(2 addresses: 203.0.113.10-203.0.113.11, 0 free)"),
            "{error}"
        ),
    }
    assert_eq!((objects(sim), allocations(sim)), before);
    assert_eq!(calls(sim).1, 0, "{}", call_lines(sim));

    let log = captured.text();
    let (later, _) = &before;
    for object in later
        .iter()
        .filter(|o| o.description.contains(" uid=uid-later"))
    {
        let lines = log
            .lines()
            .filter(|l| {
                l.contains("newer vcd-ccm") && l.contains(&format!("object={} ", object.name))
            })
            .count();
        assert_eq!(lines, 1, "{} logged {lines} times:\n{log}", object.name);
    }
}

#[tokio::test]
async fn a_later_versions_objects_are_never_changed_deleted_or_their_address_taken() {
    // One address to give: the later version's Service holds it.
    let sim = vcd::sim_from(blocks_scenario_ranged("203.0.113.10-203.0.113.11")).await;
    a_later_versions_objects_are_left_alone(
        &sim,
        ModeKind::SharedVipOneArm,
        &[("nat_rule", 2), ("pool", 2), ("virtual_service", 2)],
        true,
    )
    .await;
}

#[tokio::test]
async fn a_later_versions_ip_space_claim_is_never_released_or_taken() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    a_later_versions_objects_are_left_alone(
        &sim,
        ModeKind::SharedVip,
        &[
            ("ip_space_allocation", 1),
            ("pool", 2),
            ("virtual_service", 2),
        ],
        false,
    )
    .await;
}

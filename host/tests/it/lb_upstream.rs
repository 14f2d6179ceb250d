//! Taking over from the upstream CCM: a Service whose load balancer the
//! upstream CCM made (its names, no ownership tag) keeps its address when
//! vcd-ccm first ensures it; upstream's objects are replaced by ours, and
//! nothing of other Services or clusters is touched.

use crate::support::faults::assert_fired;
use crate::support::lb::*;
use crate::support::vcd;
use vcd_ccm::lb::ServiceSpec;
use vcdsim::Sim;
use vcdsim::world::Ref;
use vcdsim::world::nat::AppPortProfile;

const UID: &str = "uid-upstream";

/// Upstream's name suffix for port `port` of Service `web`.
fn suffix(cluster: &str, port: &str) -> String {
    format!("web-{cluster}-{port}")
}

/// Turns the Service's objects into what the upstream CCM would have made
/// for a Service named `web` in `cluster`: its names, no description.
fn make_upstream(sim: &Sim, cluster: &str) {
    let rename = |name: &str, prefix: &str| {
        let port = name.rsplit('-').next().unwrap_or_default();
        format!("{prefix}{}", suffix(cluster, &format!("p{port}")))
    };
    let needle = format!(" uid={UID}");
    let ours =
        |description: &Option<String>| description.as_deref().is_some_and(|d| d.contains(&needle));
    sim.with_world(|w| {
        for pool in w.pools.iter_mut().filter(|p| ours(&p.description)) {
            pool.name = rename(&pool.name, "ingress-pool-");
            pool.description = None;
        }
        let pools: Vec<(String, String)> = w
            .pools
            .iter()
            .map(|p| (p.id.clone().unwrap_or_default(), p.name.clone()))
            .collect();
        for vs in w
            .virtual_services
            .iter_mut()
            .filter(|v| ours(&v.description))
        {
            vs.name = rename(&vs.name, "ingress-vs-");
            vs.description = None;
            if let Some((_, name)) = pools
                .iter()
                .find(|(id, _)| *id == vs.load_balancer_pool_ref.id)
            {
                vs.load_balancer_pool_ref.name = name.clone();
            }
        }
        let mut profiles = Vec::new();
        for rule in w.nat_rules.iter_mut().filter(|r| ours(&r.body.description)) {
            rule.body.name = rename(&rule.body.name, "dnat-ingress-vs-");
            rule.body.description = None;
            // Upstream gave each DNAT rule a tenant port profile of its own.
            let mut profile = AppPortProfile::system(
                &format!("appPort_{}", rule.body.name),
                "TCP",
                &rule.body.dnat_external_port.clone().unwrap_or_default(),
            );
            profile.id = Some(format!(
                "urn:vcloud:applicationPortProfile:{}",
                rule.body.name
            ));
            profile.description = None;
            profile.scope = "TENANT".into();
            rule.body.application_port_profile = Some(Ref {
                name: profile.name.clone(),
                id: profile.id.clone().unwrap_or_default(),
            });
            profiles.push(profile);
        }
        w.port_profiles.extend(profiles);
    });
}

/// A load balancer for `svc` as the upstream CCM of this cluster made it;
/// returns its address.
async fn upstream_load_balancer(sim: &Sim, mode: ModeKind, svc: &ServiceSpec) -> String {
    let first = engine(sim, config(CLUSTER, mode)).await;
    let status = first.ensure(svc, &nodes(2)).await.expect("created");
    make_upstream(sim, CLUSTER);
    status.ingress[0].ip.clone()
}

fn upstream_named(sim: &Sim) -> Vec<Object> {
    objects(sim)
        .into_iter()
        .filter(|o| o.description.is_empty())
        .collect()
}

async fn takes_over(mode: ModeKind) {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let svc = service("shop", "web", UID, vec![tcp(80, 30080), tcp(443, 30443)]);
    let ip = upstream_load_balancer(&sim, mode, &svc).await;
    let per_port = if mode == ModeKind::SharedVip { 2 } else { 3 };
    assert_eq!(
        upstream_named(&sim).len(),
        2 * per_port,
        "{:#?}",
        objects(&sim)
    );
    assert!(objects_of(&sim, UID).is_empty());

    let ours = engine(&sim, config(CLUSTER, mode)).await;
    let status = ours.ensure(&svc, &nodes(2)).await.expect("taken over");
    assert_eq!(status.ingress[0].ip, ip, "{mode:?}: the address is kept");
    assert!(
        upstream_named(&sim).is_empty(),
        "{mode:?}: {:#?}",
        upstream_named(&sim)
    );
    let profiles_left = sim.with_world(|w| {
        w.port_profiles
            .iter()
            .filter(|p| p.name.starts_with("appPort_"))
            .count()
    });
    assert_eq!(
        profiles_left, 0,
        "{mode:?}: upstream's port profiles are deleted"
    );
    assert_eq!(objects_of(&sim, UID).len(), 2 * per_port);
    sim.reset_log();
    ours.ensure(&svc, &nodes(2)).await.unwrap();
    assert_eq!(calls(&sim).1, 0, "converged:\n{}", call_lines(&sim));
}

#[tokio::test]
async fn a_shared_vip_load_balancer_of_the_upstream_ccm_is_taken_over_on_its_address() {
    takes_over(ModeKind::SharedVip).await;
}

#[tokio::test]
async fn a_one_arm_load_balancer_of_the_upstream_ccm_is_taken_over_on_its_address() {
    takes_over(ModeKind::OneArm).await;
}

#[tokio::test]
async fn upstream_objects_of_other_services_and_clusters_are_left_alone() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let svc = service("shop", "web", UID, vec![tcp(80, 30080)]);
    let first = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    first.ensure(&svc, &nodes(1)).await.expect("created");
    make_upstream(&sim, "some-other-cluster");
    let theirs = upstream_named(&sim);
    assert_eq!(theirs.len(), 2);

    let ours = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let other = service("shop", "api", "uid-api", vec![tcp(80, 30081)]);
    ours.ensure(&other, &nodes(1))
        .await
        .expect("another Service");
    ours.ensure(
        &service("shop", "web", "uid-web-2", vec![tcp(8080, 30082)]),
        &nodes(1),
    )
    .await
    .expect("a Service named web, other ports");
    assert_eq!(
        upstream_named(&sim),
        theirs,
        "another cluster's objects stay"
    );
}

#[tokio::test]
async fn an_ip_space_address_of_the_upstream_ccm_is_kept_and_claimed_for_us() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let svc = service("shop", "web", UID, vec![tcp(80, 30080)]);
    let ip = upstream_load_balancer(&sim, ModeKind::SharedVip, &svc).await;
    let upstream_marker = format!("cluster-{CLUSTER}-namespace-shop-service-web");
    sim.with_world(|w| {
        for allocation in &mut w.ip_allocations {
            allocation.description = upstream_marker.clone();
        }
    });

    let ours = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let status = ours.ensure(&svc, &nodes(1)).await.expect("taken over");
    assert_eq!(status.ingress[0].ip, ip);
    let claims = allocations(&sim);
    assert_eq!(claims.len(), 1, "no second allocation: {claims:?}");
    assert!(claims[0].1.contains(&format!("uid={UID}")), "{claims:?}");
}

#[tokio::test]
async fn a_refused_takeover_leaves_the_upstream_load_balancer_serving() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let svc = service("shop", "web", UID, vec![tcp(80, 30080)]);
    let ip = upstream_load_balancer(&sim, ModeKind::SharedVip, &svc).await;
    let before = upstream_named(&sim);
    let ours = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;

    // A decision the host refuses: an address outside every pool.
    let mut refused = svc.clone();
    refused.load_balancer_ip = Some("198.18.0.1".into());
    let error = ours.ensure(&refused, &nodes(1)).await.unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("198.18.0.1") && message.contains("keeps serving"),
        "{message}"
    );
    assert_eq!(upstream_named(&sim), before, "nothing upstream touched");
    assert!(objects_of(&sim, UID).is_empty());

    let status = ours.ensure(&svc, &nodes(1)).await.expect("taken over");
    assert_eq!(status.ingress[0].ip, ip);
    assert!(upstream_named(&sim).is_empty());
}

/// The takeover dies after the upstream objects are gone and before ours
/// exist; the next reconcile still serves the same address. Upstream got
/// `upstream_ip`, not the address vcd-ccm would pick for the Service.
async fn a_takeover_cut_short_keeps_the_address(
    scenario: vcdsim::Scenario,
    upstream_ip: &str,
    upstream_claim: bool,
) {
    let sim = vcd::sim_from(scenario).await;
    let mut svc = service("shop", "web", UID, vec![tcp(80, 30080)]);
    svc.load_balancer_ip = Some(upstream_ip.into());
    let ip = upstream_load_balancer(&sim, ModeKind::SharedVip, &svc).await;
    assert_eq!(ip, upstream_ip);
    svc.load_balancer_ip = None;
    if upstream_claim {
        let marker = format!("cluster-{CLUSTER}-namespace-shop-service-web");
        sim.with_world(|w| {
            for allocation in &mut w.ip_allocations {
                allocation.description = marker.clone();
            }
        });
    }
    // The upstream CCM reported the address in the Service's status.
    svc.reported_ips = vec![ip.clone()];
    let ours = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    sim.add_fault(vcdsim::FaultRule::new(
        Some("POST"),
        "/cloudapi/1.0.0/loadBalancer/pools",
        vcdsim::FaultAction::Error {
            status: 500,
            minor_error_code: "INTERNAL_SERVER_ERROR".into(),
            message: "the process stops here".into(),
        },
    ));
    ours.ensure(&svc, &nodes(1)).await.unwrap_err();
    assert!(upstream_named(&sim).is_empty(), "the upstream objects went");
    assert_fired(&sim, "the pool create after the takeover");

    let restarted = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let status = restarted.ensure(&svc, &nodes(1)).await.expect("converged");
    assert_eq!(status.ingress[0].ip, ip, "the same address after the cut");
    assert_eq!(allocations(&sim).len(), usize::from(upstream_claim));
}

#[tokio::test]
async fn an_ip_block_takeover_cut_short_keeps_the_address_from_the_status() {
    a_takeover_cut_short_keeps_the_address(blocks_scenario(), "203.0.113.77", false).await;
}

#[tokio::test]
async fn an_ip_space_takeover_cut_short_keeps_the_claimed_address() {
    a_takeover_cut_short_keeps_the_address(spaces_scenario(), "192.0.2.23", true).await;
}

#[tokio::test]
async fn a_service_deleted_while_its_takeover_waits_takes_the_upstream_objects_and_claim() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let svc = service("shop", "web", UID, vec![tcp(80, 30080)]);
    upstream_load_balancer(&sim, ModeKind::SharedVip, &svc).await;
    let upstream_marker = format!("cluster-{CLUSTER}-namespace-shop-service-web");
    sim.with_world(|w| {
        for allocation in &mut w.ip_allocations {
            allocation.description = upstream_marker.clone();
        }
    });
    assert_eq!(upstream_named(&sim).len(), 2);
    let ours = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    ours.delete(&svc).await.expect("deleted");
    assert!(upstream_named(&sim).is_empty(), "{:#?}", objects(&sim));
    assert!(allocations(&sim).is_empty(), "{:?}", allocations(&sim));
}

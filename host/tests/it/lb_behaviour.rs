//! Behaviour beyond the single lifecycle: same-name Services in two
//! namespaces, LoadBalancer → ClusterIP, two clusters on one gateway (with
//! one address family or two), a sharing group losing its address to another
//! owner, sweep, policy failures, and the cluster RDE's status.cpi.

use crate::support::vcd;
use std::collections::{BTreeSet, HashSet};

use crate::support::dual_stack;
use crate::support::lb::*;
use vcd_ccm::lb::{FamilyPolicy, LbError, SHARING_KEY_ANNOTATION};
use vcd_ccm::policy::model::IpFamily;

#[tokio::test]
async fn same_name_services_in_two_namespaces_get_their_own_objects_and_addresses() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let shop = web_service("shop", "web", "uid-shop");
    let blog = web_service("blog", "web", "uid-blog");
    let a = lb.ensure(&shop, &nodes(2)).await.unwrap();
    let b = lb.ensure(&blog, &nodes(2)).await.unwrap();
    assert_ne!(a.ingress[0].ip, b.ingress[0].ip);
    let names: BTreeSet<String> = objects(&sim).into_iter().map(|o| o.name).collect();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(
        names.iter().any(|n| n.contains("shop.web"))
            && names.iter().any(|n| n.contains("blog.web"))
    );
    lb.delete(&shop).await.unwrap();
    assert!(objects_of(&sim, "uid-shop").is_empty());
    assert_eq!(
        objects_of(&sim, "uid-blog").len(),
        4,
        "the other Service keeps its objects"
    );
}

#[tokio::test]
async fn load_balancer_to_cluster_ip_leaves_nothing_behind() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::OneArm)).await;
    let svc = web_service("shop", "web", "uid-1");
    lb.ensure(&svc, &nodes(2)).await.unwrap();
    // The controller passes the new spec: a ClusterIP Service has no node ports.
    let mut cluster_ip = svc.clone();
    for port in &mut cluster_ip.ports {
        port.node_port = None;
    }
    lb.delete(&cluster_ip).await.unwrap();
    assert!(objects(&sim).is_empty(), "{:#?}", objects(&sim));
}

#[tokio::test]
async fn two_clusters_creating_ten_services_each_never_share_an_address() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    sim.set_knobs(|k| {
        k.task_duration_ms = 5;
        k.busy_cooldown_ms = 2;
    });
    // Separate clients: two CCM processes, no shared write lock.
    let a = engine(&sim, config("NO_RDE_cluster-a", ModeKind::SharedVip)).await;
    let b = other_cluster_engine(&sim, config("NO_RDE_cluster-b", ModeKind::SharedVip)).await;
    let mut jobs = Vec::new();
    for i in 0..10 {
        for (lb, cluster) in [(&a, "a"), (&b, "b")] {
            // Same namespaces, names and uids in both clusters on purpose.
            let svc = web_service("default", &format!("svc-{i}"), &format!("uid-{i}"));
            jobs.push(async move { (cluster, lb.ensure(&svc, &nodes(2)).await) });
        }
    }
    let results = futures::future::join_all(jobs).await;
    let mut addresses = HashSet::new();
    for (cluster, result) in results {
        let status = result.unwrap_or_else(|e| panic!("cluster {cluster}: {e}"));
        assert!(
            addresses.insert(status.ingress[0].ip.clone()),
            "{} reported twice",
            status.ingress[0].ip
        );
    }
    // What the gateway holds agrees: every VIP belongs to one Service only.
    let mut holder_of = std::collections::HashMap::new();
    for vs in objects(&sim)
        .into_iter()
        .filter(|o| o.kind == "virtual service")
    {
        let owner = vs
            .description
            .split(" spec=")
            .next()
            .unwrap_or_default()
            .to_string();
        let previous = holder_of.insert(vs.address.clone(), owner.clone());
        assert!(
            previous.as_ref().is_none_or(|p| *p == owner),
            "{} shared by {previous:?} and {owner}",
            vs.address
        );
    }
    assert_eq!(holder_of.len(), 20);
    assert_eq!(
        objects(&sim).len(),
        80,
        "no stray objects after backing off"
    );
}

#[tokio::test]
async fn two_clusters_creating_dual_stack_services_never_share_an_address_of_either_family() {
    let sim = vcd::sim_from(dual_stack::blocks()).await;
    sim.set_knobs(|k| {
        k.task_duration_ms = 5;
        k.busy_cooldown_ms = 2;
    });
    let a = engine(&sim, config("NO_RDE_cluster-a", ModeKind::SharedVip)).await;
    let b = other_cluster_engine(&sim, config("NO_RDE_cluster-b", ModeKind::SharedVip)).await;
    let mut jobs = Vec::new();
    for i in 0..4 {
        for (lb, cluster) in [(&a, "a"), (&b, "b")] {
            let mut svc = service(
                "default",
                &format!("svc-{i}"),
                &format!("uid-{i}"),
                vec![tcp(80, 30080)],
            );
            svc.ip_families = vec![IpFamily::Ipv4, IpFamily::Ipv6];
            svc.ip_family_policy = FamilyPolicy::RequireDualStack;
            jobs.push(async move { (cluster, lb.ensure(&svc, &nodes(2)).await) });
        }
    }
    let mut addresses = HashSet::new();
    for (cluster, result) in futures::future::join_all(jobs).await {
        let status = result.unwrap_or_else(|e| panic!("cluster {cluster}: {e}"));
        assert_eq!(status.ingress.len(), 2, "an address per family");
        for ingress in status.ingress {
            assert!(
                addresses.insert(ingress.ip.clone()),
                "{} reported twice",
                ingress.ip
            );
        }
    }
    // The gateway agrees: each VIP of either family has one owner.
    let mut holder_of = std::collections::HashMap::new();
    for uid in (0..4).map(|i| format!("uid-{i}")) {
        for (cluster, (v4, v6)) in dual_stack::vips_of(&sim, &uid).into_iter().enumerate() {
            for vip in [v4, v6].into_iter().flatten() {
                let previous = holder_of.insert(vip.clone(), (uid.clone(), cluster));
                assert!(previous.is_none_or(|p| p.0 == uid), "{vip} shared");
            }
        }
    }
    assert_eq!(addresses.len(), 16);
}

#[tokio::test]
async fn sweep_removes_exactly_the_objects_of_services_that_are_gone() {
    let sim = vcd::sim_from(spaces_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVipOneArm)).await;
    let other_cluster =
        other_cluster_engine(&sim, config("NO_RDE_cluster-b", ModeKind::SharedVipOneArm)).await;
    for i in 0..3 {
        let svc = web_service("default", &format!("svc-{i}"), &format!("uid-{i}"));
        lb.ensure(&svc, &nodes(2)).await.unwrap();
    }
    let foreign = web_service("default", "svc-0", "uid-0");
    other_cluster.ensure(&foreign, &nodes(2)).await.unwrap();
    let before = objects(&sim).len();
    // uid-1 and uid-2 were deleted behind the engine's back.
    let live: HashSet<String> = ["uid-0".to_string()].into();
    let report = lb.sweep(&live).await.unwrap();
    assert_eq!(report.services.len(), 2, "{report:?}");
    assert_eq!(report.objects, 12);
    assert_eq!(report.released, 2);
    assert_eq!(objects(&sim).len(), before - 12);
    assert!(
        objects_of_cluster(&sim, CLUSTER)
            .iter()
            .all(|o| o.description.contains("uid=uid-0"))
    );
    assert_eq!(
        objects_of_cluster(&sim, "NO_RDE_cluster-b").len(),
        6,
        "other clusters untouched"
    );
    assert_eq!(allocations(&sim).len(), 2);
    // A second sweep finds nothing.
    assert_eq!(lb.sweep(&live).await.unwrap(), Default::default());
}

async fn expect_policy_failure(
    registry: std::sync::Arc<vcd_ccm::policy::Registry>,
    svc: vcd_ccm::lb::ServiceSpec,
    words: &str,
) {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine_with(&sim, config(CLUSTER, ModeKind::SharedVip), registry).await;
    sim.reset_log();
    let error = lb
        .ensure(&svc, &nodes(2))
        .await
        .expect_err("the policy fails");
    assert!(matches!(error, LbError::Policy { .. }), "{error:?}");
    let text = error.to_string();
    assert!(text.contains(words), "{text}");
    assert!(text.contains("nothing was changed in VCD"), "{text}");
    assert_eq!(
        calls(&sim).1,
        0,
        "writes after a policy failure:\n{}",
        call_lines(&sim)
    );
    assert!(objects(&sim).is_empty());
}

#[tokio::test]
async fn policy_failures_change_nothing_and_surface_the_policy_message() {
    let svc = web_service("shop", "web", "uid-1");
    expect_policy_failure(misbehaving_registry("trap").await, svc.clone(), "trapped").await;
    expect_policy_failure(misbehaving_registry("loop").await, svc.clone(), "deadline").await;
    expect_policy_failure(misbehaving_registry("oom").await, svc.clone(), "memory").await;
    expect_policy_failure(
        misbehaving_registry("ok").await,
        svc.clone(),
        "invalid decision",
    )
    .await;
    let mut bad = svc.clone();
    bad.annotations.insert(SSL_PORTS.into(), "https".into());
    let registry = default_registry(&config(CLUSTER, ModeKind::SharedVip)).await;
    expect_policy_failure(registry, bad, "vcloud-avi-ssl-ports").await;
}

#[tokio::test]
async fn a_failing_policy_leaves_an_existing_load_balancer_alone() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let svc = web_service("shop", "web", "uid-1");
    let good = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    good.ensure(&svc, &nodes(2)).await.unwrap();
    let before = objects(&sim);
    let bad = engine_with(
        &sim,
        config(CLUSTER, ModeKind::SharedVip),
        misbehaving_registry("trap").await,
    )
    .await;
    sim.reset_log();
    assert!(bad.ensure(&svc, &nodes(3)).await.is_err());
    assert_eq!(calls(&sim).1, 0);
    assert_eq!(objects(&sim), before);
}

#[tokio::test]
async fn missing_certificate_names_the_alias() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let mut svc = web_service("shop", "web", "uid-1");
    svc.annotations
        .insert(CERT_ALIAS.into(), "no-such-cert".into());
    let error = lb.ensure(&svc, &nodes(2)).await.unwrap_err().to_string();
    assert!(error.contains("no-such-cert"), "{error}");
    assert!(objects(&sim).is_empty());
}

#[tokio::test]
async fn an_address_held_by_someone_else_is_refused_with_its_holder() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let first = lb
        .ensure(&web_service("shop", "a", "uid-a"), &nodes(1))
        .await
        .unwrap();
    let mut second = web_service("shop", "b", "uid-b");
    second.load_balancer_ip = Some(first.ingress[0].ip.clone());
    let error = lb.ensure(&second, &nodes(1)).await.unwrap_err();
    assert!(matches!(error, LbError::AddressInUse { .. }), "{error}");
    assert!(objects_of(&sim, "uid-b").is_empty());
}

#[tokio::test]
async fn status_cpi_of_the_cluster_rde_records_addresses_and_events() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let entity_id = sim
        .with_world(|w| w.entities[0].body.id.clone())
        .expect("an entity");
    let lb = engine(&sim, config(&entity_id, ModeKind::SharedVip)).await;
    let svc = web_service("shop", "web", "uid-1");
    let ip = lb.ensure(&svc, &nodes(2)).await.unwrap().ingress[0]
        .ip
        .clone();
    let cpi = sim.with_world(|w| w.entities[0].body.entity["status"]["cpi"].clone());
    assert_eq!(cpi["virtualIPs"], serde_json::json!([ip]));
    assert_eq!(cpi["eventSet"][0]["name"], "CreatedLoadbalancer");
    lb.delete(&svc).await.unwrap();
    let cpi = sim.with_world(|w| w.entities[0].body.entity["status"]["cpi"].clone());
    assert_eq!(cpi["virtualIPs"], serde_json::json!([]));
    assert_eq!(cpi["eventSet"][1]["name"], "DeletedLoadbalancer");
}

#[tokio::test]
async fn a_sharing_group_whose_address_another_owner_took_moves_together_to_a_fresh_one() {
    let sim = vcd::sim_from(blocks_scenario()).await;
    let lb = engine(&sim, config(CLUSTER, ModeKind::SharedVip)).await;
    let keyed = |name: &str, uid: &str, port: u16, node_port: u16| {
        let mut spec = service("shop", name, uid, vec![tcp(port, node_port)]);
        spec.annotations
            .insert(SHARING_KEY_ANNOTATION.into(), "front".into());
        spec
    };
    let first = keyed("web", "uid-first", 80, 30080);
    let second = keyed("api", "uid-second", 8080, 30081);
    let shared = lb.ensure(&first, &nodes(2)).await.unwrap().ingress[0]
        .ip
        .clone();
    assert_eq!(
        lb.ensure(&second, &nodes(2)).await.unwrap().ingress[0].ip,
        shared
    );

    // Another owner's virtual service lands on the address, as a racing
    // owner's write does before either side has verified.
    sim.with_world(|w| {
        let mut theirs = w
            .virtual_services
            .iter()
            .find(|vs| vs.virtual_ip_address.as_deref() == Some(shared.as_str()))
            .expect("a virtual service on the shared address")
            .clone();
        theirs.id = Some(
            "urn:vcloud:loadBalancerVirtualService:0d2a0c3e-1111-4222-8333-944445555666".into(),
        );
        theirs.name = "theirs".into();
        theirs.description = Some("kept by another team".into());
        theirs.service_ports[0].port_start = 9443;
        theirs.service_ports[0].port_end = Some(9443);
        w.virtual_services.push(theirs);
    });
    lb.refresh_gateway().await.unwrap();

    let moved = lb
        .ensure(&first, &nodes(2))
        .await
        .expect("the first moves")
        .ingress[0]
        .ip
        .clone();
    assert_ne!(moved, shared);
    let joined = lb
        .ensure(&second, &nodes(2))
        .await
        .expect("the second follows")
        .ingress[0]
        .ip
        .clone();
    assert_eq!(joined, moved, "the group stays together");
    let theirs: Vec<Object> = objects(&sim)
        .into_iter()
        .filter(|o| o.name == "theirs")
        .collect();
    assert_eq!(theirs.len(), 1);
    assert_eq!(
        theirs[0].address, shared,
        "the other owner's object is untouched"
    );
}

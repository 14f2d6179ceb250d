//! Internal load balancers through `vcd-ccm run` (`vcd-ccm.io/internal`):
//! an internal Service's virtual services listen on an internal address,
//! with no DNAT rule and no external address consumed; a requested
//! internal address works and one another Service holds is refused before
//! any write; a Service moving between internal and external gets its new
//! address, the old one is released, and an Event says so. In shared VIP
//! mode the addresses come from `loadbalancer.internal`, in one-arm mode
//! from the one-arm range by default; internal IPv6 ranges serve dual-stack
//! Services in one-arm mode too, as internal addresses take no DNAT rule.

use serde_json::json;
use vcdsim::Scenario;

use super::{CONVERGE, START, leading};
use crate::support::objects::ServiceEdits;
use crate::support::poll::wait_until;
use crate::support::run::gateway::{Tagged, cluster_objects};
use crate::support::run::{LiveService, World};

const INTERNAL: &str = "vcd-ccm.io/internal";
const MOVED: &str = "LoadBalancerAddressMoved";

/// The Service's ingress address once it lies in (or, with `inside`
/// false, outside) the range starting `prefix`.
async fn address_in(world: &World, name: &str, prefix: &str, inside: bool) -> String {
    let what = format!("{name}'s address, {prefix}* {inside}");
    let (ip, _) = wait_until(&what, START + CONVERGE, || async {
        let ip = world.external_ip(name).await?;
        match ip.starts_with(prefix) == inside {
            true => Ok(ip),
            false => Err(format!("{name} is on {ip}")),
        }
    })
    .await;
    ip
}

fn objects_of<'a>(objects: &'a [Tagged], service: &LiveService) -> Vec<&'a Tagged> {
    objects
        .iter()
        .filter(|o| o.tag.contains(&service.uid))
        .collect()
}

/// Every virtual service of the Service listens on `ip`, and it has no
/// NAT rule.
fn served_on(world: &World, service: &LiveService, ip: &str) -> Result<(), String> {
    let objects = cluster_objects(&world.vcd);
    let own = objects_of(&objects, service);
    let vips: Vec<&str> = own
        .iter()
        .filter_map(|o| o.vip.as_ref().map(|(vip, _)| vip.as_str()))
        .collect();
    let nat = own.iter().filter(|o| o.kind == "nat rule").count();
    match (
        vips.len() == service.ports.len() && vips.iter().all(|v| *v == ip),
        nat,
    ) {
        (true, 0) => Ok(()),
        _ => Err(format!("{}: VIPs {vips:?}, {nat} NAT rules", service.name)),
    }
}

async fn set_internal(world: &World, name: &str, internal: bool) {
    world
        .patch_service(
            "default",
            name,
            json!({"metadata": {"annotations": {INTERNAL: internal.to_string()}}}),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_vip_on_ip_blocks_takes_the_configured_ranges() {
    let world = World::start().await;
    world.add_load_balancer_setting(
        "internal: {ranges: [{startIP: 10.20.0.10, endIP: 10.20.0.50}]}",
    );
    world.add_load_balancer_setting("manageFirewall: true");
    world.add_nodes().await;
    let ccm = world.spawn("internal", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let pinned = world
        .create_annotated_service(
            "pinned",
            &[6379],
            json!({INTERNAL: "true", "vcd-ccm.io/load-balancer-ip": "10.20.0.33"}),
        )
        .await;
    assert_eq!(
        address_in(&world, "pinned", "10.20.0.33", true).await,
        "10.20.0.33"
    );
    let db = world
        .create_annotated_service("db", &[5432, 5433], json!({INTERNAL: "true"}))
        .await;
    let web = world.create_service("web", &[80]).await;
    let internal_ip = address_in(&world, "db", "10.20.0.", true).await;
    wait_until("db on its internal address", CONVERGE, || async {
        served_on(&world, &db, &internal_ip)
    })
    .await;
    let web_ip = address_in(&world, "web", "10.20.0.", false).await;

    // Source ranges: the managed rule's destination is the internal address.
    world
        .patch_service(
            "default",
            "db",
            json!({"spec": {"loadBalancerSourceRanges": ["10.0.0.0/8"]}}),
        )
        .await;
    wait_until("db's firewall destinations", CONVERGE, || async {
        let destinations = world.vcd.with_world(|w| {
            w.firewall_groups
                .iter()
                .find(|g| g.body.name.starts_with("ingress-fw-dst-default.db-"))
                .map(|g| g.body.ip_addresses.clone())
        });
        match destinations {
            Some(Some(ips)) if ips == vec![internal_ip.clone()] => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    wait_until("pinned on 10.20.0.33", CONVERGE, || async {
        served_on(&world, &pinned, "10.20.0.33")
    })
    .await;

    // An internal address another Service holds: refused, nothing written.
    let clash = world
        .create_annotated_service(
            "clash",
            &[6380],
            json!({INTERNAL: "true", "vcd-ccm.io/load-balancer-ip": "10.20.0.33"}),
        )
        .await;
    let (message, _) = wait_until("clash's refusal", START, || {
        world.latest_event("clash", "SyncLoadBalancerFailed")
    })
    .await;
    assert!(message.contains("10.20.0.33"), "{message}");
    assert!(objects_of(&cluster_objects(&world.vcd), &clash).is_empty());

    // To an external address and back: each move said, the old address
    // left behind.
    set_internal(&world, "db", false).await;
    let external = address_in(&world, "db", "10.20.0.", false).await;
    assert_ne!(external, web_ip);
    wait_until("db on its external address", CONVERGE, || async {
        served_on(&world, &db, &external)
    })
    .await;
    let (message, _) = wait_until("the move's Event", START, || {
        world.latest_event("db", MOVED)
    })
    .await;
    assert!(
        message.contains(&format!(
            "from the internal address {internal_ip} to the external address {external}"
        )),
        "{message}"
    );
    set_internal(&world, "db", true).await;
    let back = address_in(&world, "db", "10.20.0.", true).await;
    wait_until("db internal again", CONVERGE, || async {
        served_on(&world, &db, &back)
    })
    .await;
    let (message, _) = wait_until("the second move's Event", START, || async {
        let message = world.latest_event("db", MOVED).await?;
        match message.contains("to the internal address") {
            true => Ok(message),
            false => Err(message),
        }
    })
    .await;
    assert!(
        message.contains(&format!("from the external address {external}")),
        "{message}"
    );
    assert!(served_on(&world, &web, &web_ip).is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_arm_on_ip_spaces_takes_the_one_arm_range_with_no_dnat_and_no_allocation() {
    let world = World::start_on(Scenario::ip_space()).await;
    world.use_one_arm();
    world.add_nodes().await;
    let ccm = world.spawn("internal-one-arm", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let allocations = || world.vcd.with_world(|w| w.ip_allocations.len());

    let web = world.create_service("web", &[80, 443]).await;
    let external = address_in(&world, "web", "192.168.8.", false).await;
    let allocated = |ip: &str| {
        world
            .vcd
            .with_world(|w| w.ip_allocations.iter().any(|a| a.value.to_string() == ip))
    };
    assert!(allocated(&external), "{external} is allocated to the org");
    let before = allocations();

    let db = world
        .create_annotated_service("db", &[5432], json!({INTERNAL: "true"}))
        .await;
    let db_ip = address_in(&world, "db", "192.168.8.", true).await;
    wait_until("db on its internal address", CONVERGE, || async {
        served_on(&world, &db, &db_ip)
    })
    .await;
    assert_eq!(
        allocations(),
        before,
        "an internal Service allocates nothing"
    );

    // web moves inside: its DNAT rules go, its two ports share one
    // internal address, and its IP Space allocation is released.
    set_internal(&world, "web", true).await;
    let inside = address_in(&world, "web", "192.168.8.", true).await;
    wait_until("web on its internal address", CONVERGE, || async {
        served_on(&world, &web, &inside)?;
        match allocated(&external) {
            false => Ok(()),
            true => Err(format!("{external} is still allocated")),
        }
    })
    .await;
    let (message, _) = wait_until("the move's Event", START, || {
        world.latest_event("web", MOVED)
    })
    .await;
    assert!(
        message.contains(&format!(
            "from the external address {external} to the internal address {inside}"
        )),
        "{message}"
    );
    assert_ne!(inside, db_ip);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dual_stack_internal_addresses_serve_in_one_arm_mode_too() {
    let world = World::start_on(crate::support::dual_stack::blocks()).await;
    world.use_one_arm();
    world.add_load_balancer_setting(
        "internal: {ranges: [{startIP: 10.20.0.10, endIP: 10.20.0.50}, {startIP: \"fd00:20::10\", endIP: \"fd00:20::ff\"}]}",
    );
    world.add_nodes().await;
    let ccm = world.spawn("internal-dual-stack", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let db = world
        .create_annotated_service("db", &[5432], json!({INTERNAL: "true"}))
        .await;
    world
        .patch_service(
            "default",
            "db",
            json!({"spec": {"ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv4", "IPv6"]}}),
        )
        .await;
    let (vips, _) = wait_until("db's two internal VIPs", START + CONVERGE, || async {
        let vips = crate::support::dual_stack::vips_of(&world.vcd, &db.uid);
        match vips.as_slice() {
            [(Some(v4), Some(v6))] if v4.starts_with("10.20.0.") && v6.starts_with("fd00:20::") => {
                Ok((v4.clone(), v6.clone()))
            }
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let objects = cluster_objects(&world.vcd);
    let nat = objects_of(&objects, &db)
        .into_iter()
        .filter(|o| o.kind == "nat rule")
        .count();
    assert_eq!(nat, 0, "no DNAT rule for an internal Service");
    assert_eq!(address_in(&world, "db", &vips.0, true).await, vips.0);
}

/// vcdsim's IP Space world with a PRIVATE space of org1, `private1`.
pub(crate) fn with_private_space() -> Scenario {
    let yaml = vcdsim::scenario::IP_SPACE_SCENARIO.replacen(
        "ipSpaces:\n",
        "ipSpaces:\n  - name: private1\n    type: PRIVATE\n    org: org1\n    ranges: [\"10.30.0.10-10.30.0.20\"]\n    internalScope: [\"10.30.0.0/24\"]\n",
        1,
    );
    Scenario::from_yaml(&yaml).expect("the scenario parses")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_private_ip_space_serves_internal_addresses_allocated_and_released() {
    let world = World::start_on(with_private_space()).await;
    world.add_load_balancer_setting("internal: {ipSpace: private1}");
    world.add_nodes().await;
    let ccm = world.spawn("internal-private", &[]);
    wait_until("the process to lead", START, || leading(&ccm)).await;
    let db = world
        .create_annotated_service("db", &[5432], json!({INTERNAL: "true"}))
        .await;
    let ip = address_in(&world, "db", "10.30.0.", true).await;
    wait_until("db on its private address", CONVERGE, || async {
        served_on(&world, &db, &ip)
    })
    .await;
    let claimed = world.vcd.with_world(|w| {
        w.ip_allocations
            .iter()
            .find(|a| a.value.to_string() == ip)
            .map(|a| a.description.clone())
    });
    assert!(
        claimed.as_deref().is_some_and(|d| d.contains(&db.uid)),
        "{claimed:?}"
    );
    world.delete_service("default", "db").await;
    wait_until("the private address released", CONVERGE, || async {
        let left = world
            .vcd
            .with_world(|w| w.ip_allocations.iter().any(|a| a.value.to_string() == ip));
        match left {
            false => Ok(()),
            true => Err(format!("{ip} is still allocated")),
        }
    })
    .await;
}

//! Load balancers on the group's gateway, in shared-VIP and one-arm modes,
//! on IP blocks and on IP Spaces: members from both VDCs, Nodes initialised
//! without zones, the managed firewall rule in the group's context, an
//! object deleted by hand repaired, and a Service deleted while the CCM was
//! down swept at its next start.

use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::json;
use vcdsim::Scenario;

use super::{WAIT, initialised_nodes, label, on_ip_spaces};
use crate::e2e_run::START;
use crate::support::poll::wait_until;
use crate::support::run::gateway::{check_converged, cluster_objects};
use crate::support::run::{LiveService, World};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    SharedVip,
    OneArm,
}

/// Shared VIP: one pool and virtual service on the external address. One
/// arm: the virtual service on a one-arm address and one DNAT rule from the
/// external address to it.
fn converged(world: &World, web: &LiveService, ip: &str, mode: Mode) -> Result<(), String> {
    if mode == Mode::SharedVip {
        return check_converged(&world.vcd, &[(web.clone(), ip.to_string())]);
    }
    let objects = cluster_objects(&world.vcd);
    let vips: Vec<&str> = objects
        .iter()
        .filter_map(|o| o.vip.as_ref().map(|(vip, _)| vip.as_str()))
        .collect();
    let pools = objects.iter().filter(|o| o.kind == "pool").count();
    let dnat: Vec<String> = world.vcd.with_world(|w| {
        w.nat_rules
            .iter()
            .filter(|r| {
                r.body
                    .description
                    .as_deref()
                    .unwrap_or("")
                    .contains(&web.uid)
            })
            .map(|r| {
                format!(
                    "{}→{}",
                    r.body.external_addresses, r.body.internal_addresses
                )
            })
            .collect()
    });
    match (pools, vips.as_slice(), dnat.as_slice()) {
        (1, [vip], [rule]) if vip.starts_with("192.168.8.") && *rule == format!("{ip}→{vip}") => {
            Ok(())
        }
        _ => Err(format!(
            "{pools} pools, virtual services at {vips:?}, DNAT {dnat:?}"
        )),
    }
}

const FLAGS: &[&str] = &["--leader-elect=false", "--drift-repair-period=1s"];

async fn serves(scenario: Scenario, mode: Mode, external: &str) {
    let world = World::start_on(scenario).await;
    if mode == Mode::OneArm {
        world.use_one_arm();
    }
    world.add_load_balancer_setting("manageFirewall: true");
    world.add_new_nodes().await;
    let mut ccm = world.spawn("dc-group", FLAGS);
    wait_until("the process to be ready", START, || ccm.ready()).await;

    // Nodes of both VDCs, and no zone without isZoneEnabledCluster (as upstream).
    for node in initialised_nodes(&world).await {
        assert_eq!(label(&node, "topology.kubernetes.io/zone"), None);
    }

    let ranges =
        json!({"service.beta.kubernetes.io/load-balancer-source-ranges": "198.51.100.0/24"});
    let web = world.create_annotated_service("web", &[80], ranges).await;
    let (ip, _) = wait_until("an address", WAIT, || world.external_ip("web")).await;
    assert!(ip.starts_with(external), "{ip} is not from {external}");
    let converged = || async { converged(&world, &web, &ip, mode) };
    wait_until("the load balancer converged", WAIT, converged).await;
    let (members, on_group_gateway) = world.vcd.with_world(|w| {
        let group = w.vdc_groups[0].id.clone();
        let pool = w
            .pools
            .iter()
            .find(|p| p.description.as_deref().unwrap_or("").contains(&web.uid))
            .expect("the Service's pool");
        let mut members = w.pool_member_ips(pool);
        members.sort();
        let gateway = w.gateways.iter().find(|g| g.name == "edge1").unwrap();
        (members, gateway.owner_id == group)
    });
    assert_eq!(members, ["10.0.0.11", "10.0.0.12"], "one member per VDC");
    assert!(on_group_gateway);
    // The firewall rule letting the source range in, with its port profile
    // created in the group's context (vcdsim refuses a member VDC's).
    let profile_of_rule = world.vcd.with_world(|w| {
        let needle = format!(" uid={}", web.uid);
        let rule = w.firewall_rules.iter().find(|r| {
            r.body
                .description
                .as_deref()
                .is_some_and(|d| d.contains(&needle))
        })?;
        rule.body
            .application_port_profiles
            .as_ref()?
            .first()
            .map(|p| p.id.clone())
    });
    assert!(
        profile_of_rule.is_some(),
        "the Service's firewall rule and its profile"
    );

    // A virtual service deleted by hand comes back.
    world.vcd.with_world(|w| {
        w.virtual_services
            .retain(|vs| !vs.description.as_deref().unwrap_or("").contains(&web.uid))
    });
    let (message, _) = wait_until("the repair's Event", WAIT, || {
        world.latest_event("web", "LoadBalancerRepaired")
    })
    .await;
    assert!(message.contains("virtual service"), "{message}");
    wait_until("converged again", WAIT, converged).await;

    // Deleted while the CCM is down: swept at the next start.
    ccm.kill();
    let services: Api<Service> = Api::namespaced(world.client.clone(), "default");
    let no_finalizers = json!({"metadata": {"finalizers": null}});
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&no_finalizers),
        )
        .await
        .expect("the finalizer is removed");
    services
        .delete("web", &DeleteParams::default())
        .await
        .expect("the Service is deleted");
    assert!(!cluster_objects(&world.vcd).is_empty());
    let again = world.spawn("dc-group-again", FLAGS);
    wait_until("the process to be ready", START, || again.ready()).await;
    wait_until("the Service's objects swept", WAIT, || async {
        match cluster_objects(&world.vcd).as_slice() {
            [] => Ok(()),
            left => Err(format!("{} objects left", left.len())),
        }
    })
    .await;
    // The sweep gives addresses back after the objects that used them.
    wait_until("the address given back", WAIT, || async {
        let kept = world
            .vcd
            .with_world(|w| w.ip_allocations.iter().any(|a| a.value.to_string() == ip));
        match kept {
            true => Err(format!("{ip} is still allocated")),
            false => Ok(()),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_vip_on_ip_blocks() {
    serves(Scenario::dc_group(), Mode::SharedVip, "203.0.113.").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_arm_on_ip_blocks() {
    serves(Scenario::dc_group(), Mode::OneArm, "203.0.113.").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_vip_on_ip_spaces() {
    serves(on_ip_spaces(), Mode::SharedVip, "192.0.2.").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_arm_on_ip_spaces() {
    serves(on_ip_spaces(), Mode::OneArm, "192.0.2.").await;
}

//! `instance_exists` and `instance_shutdown` against vcdsim: deleted and
//! powered-off VMs, and how fresh the power state is.

use std::time::Duration;

use crate::support::instances::*;
use vcd_ccm::instances::NodeRef;
use vcdsim::world::compute::PowerState;

fn cluster_yaml() -> String {
    world_yaml(&[("vdc1", vec![("cluster1", workers(3))])])
}

fn set_power(sim: &vcdsim::Sim, name: &str, power: PowerState) {
    let urn = vm_urn(sim, name);
    sim.with_world(|w| w.set_vm_power(&urn, power)).unwrap();
}

#[tokio::test]
async fn a_deleted_vm_does_not_exist_and_is_not_shut_down() {
    let sim = start(&cluster_yaml()).await;
    let mut config = single_zone();
    config.cache_period = LONG;
    config.power_state_max_age = Duration::ZERO;
    let instances = instances(&sim, config).await;
    let by_name = NodeRef::named("worker-1");
    let id = provider_id(&sim, "worker-1");
    let by_id = NodeRef::named("worker-1").with_provider_id(&id);
    assert!(instances.instance_exists(&by_name).await.unwrap());
    assert!(instances.instance_exists(&by_id).await.unwrap());

    let urn = vm_urn(&sim, "worker-1");
    sim.with_world(|w| w.remove_vm(&urn)).unwrap();
    assert!(!instances.instance_exists(&by_name).await.unwrap());
    assert!(!instances.instance_exists(&by_id).await.unwrap());
    assert!(!instances.instance_shutdown(&by_id).await.unwrap());
    assert!(instances.instance_metadata(&by_id).await.is_err());
    // The others are untouched.
    assert!(
        instances
            .instance_exists(&NodeRef::named("worker-0"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_vm_recreated_under_the_same_name_is_found_by_name_not_by_old_id() {
    let sim = start(&cluster_yaml()).await;
    let mut config = single_zone();
    config.power_state_max_age = Duration::ZERO;
    let instances = instances(&sim, config).await;
    let old_id = provider_id(&sim, "worker-2");
    assert!(
        instances
            .instance_exists(&NodeRef::named("worker-2"))
            .await
            .unwrap()
    );

    let old_urn = vm_urn(&sim, "worker-2");
    sim.with_world(|w| {
        w.remove_vm(&old_urn).unwrap();
        let vapp = w.vapps[0].id.clone();
        let spec = serde_json::from_value(serde_json::json!({"name": "worker-2"})).unwrap();
        w.add_vm(&vapp, &spec).unwrap();
    });
    assert!(
        instances
            .instance_exists(&NodeRef::named("worker-2"))
            .await
            .unwrap()
    );
    let stale = NodeRef::named("worker-2").with_provider_id(&old_id);
    assert!(!instances.instance_exists(&stale).await.unwrap());
}

#[tokio::test]
async fn powered_off_and_suspended_vms_are_shut_down() {
    let sim = start(&cluster_yaml()).await;
    set_power(&sim, "worker-0", PowerState::PoweredOff);
    set_power(&sim, "worker-1", PowerState::Suspended);
    let instances = instances(&sim, single_zone()).await;
    let shutdown = async |name: &str| {
        instances
            .instance_shutdown(&NodeRef::named(name))
            .await
            .unwrap()
    };
    assert!(shutdown("worker-0").await);
    assert!(shutdown("worker-1").await);
    assert!(!shutdown("worker-2").await);
    // A powered-off VM still exists: the node keeps its object, with a taint.
    assert!(
        instances
            .instance_exists(&NodeRef::named("worker-0"))
            .await
            .unwrap()
    );
    // A node whose VM is unknown is not shut down.
    assert!(!shutdown("worker-99").await);
}

#[tokio::test]
async fn the_power_state_is_read_again_once_older_than_the_max_age() {
    let sim = start(&cluster_yaml()).await;
    let node = NodeRef::named("worker-0");

    // Within the max age the load's power state answers, with no call.
    let mut config = single_zone();
    config.cache_period = LONG;
    config.power_state_max_age = LONG;
    let cached = instances(&sim, config).await;
    assert!(!cached.instance_shutdown(&node).await.unwrap());
    set_power(&sim, "worker-0", PowerState::PoweredOff);
    sim.reset_log();
    assert!(!cached.instance_shutdown(&node).await.unwrap());
    assert_eq!(inventory_calls(&sim), 0);
    set_power(&sim, "worker-0", PowerState::PoweredOn);

    // Older than the max age: one GET of that VM, and the answer is current.
    let mut config = single_zone();
    config.cache_period = LONG;
    config.power_state_max_age = Duration::from_millis(200);
    let fresh = instances(&sim, config).await;
    assert!(!fresh.instance_shutdown(&node).await.unwrap());
    set_power(&sim, "worker-0", PowerState::PoweredOff);
    tokio::time::sleep(Duration::from_millis(300)).await;
    sim.reset_log();
    assert!(fresh.instance_shutdown(&node).await.unwrap());
    assert_eq!((sim.count(QUERY), sim.count(VAPP_OR_VM)), (0, 1));
    // That read refreshed the entry: asking again at once costs nothing.
    assert!(fresh.instance_shutdown(&node).await.unwrap());
    assert!(fresh.instance_exists(&node).await.unwrap());
    assert_eq!(inventory_calls(&sim), 1);
}

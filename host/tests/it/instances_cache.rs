//! The VM inventory cache against vcdsim: single-flight loads, expiry,
//! failures that surface and recover, and the calls it takes to
//! initialise 100 nodes (printed; run with `--nocapture` to see them).

use crate::support::vcd;
use std::sync::Arc;
use std::time::Duration;

use crate::support::instances::*;
use tokio::task::JoinSet;
use vcd_ccm::instances::{Instances, InstancesError, NodeRef};
use vcdsim::{FaultAction, FaultRule, Sim};

fn cluster_yaml(workers_in_cluster: usize) -> String {
    world_yaml(&[(
        "vdc1",
        vec![
            ("cluster1", workers(workers_in_cluster)),
            ("other", vec![worker("stranger-0", "10.9.0.10")]),
        ],
    )])
}

/// `count` concurrent metadata lookups of `name`.
async fn concurrent_metadata(
    instances: &Arc<Instances>,
    name: &'static str,
    count: usize,
) -> Vec<Result<String, InstancesError>> {
    let mut tasks = JoinSet::new();
    for _ in 0..count {
        let instances = instances.clone();
        tasks.spawn(async move {
            instances
                .instance_metadata(&NodeRef::named(name))
                .await
                .map(|m| m.provider_id)
        });
    }
    tasks.join_all().await
}

fn add_worker(sim: &Sim, name: &str, ip: &str) {
    let spec = serde_json::from_value(
        serde_json::json!({"name": name, "nics": [{"network": "net1", "ip": ip}]}),
    )
    .unwrap();
    sim.with_world(|w| {
        let vapp = w
            .vapps
            .iter()
            .find(|a| a.name == "cluster1")
            .unwrap()
            .id
            .clone();
        w.add_vm(&vapp, &spec).unwrap();
    });
}

#[tokio::test]
async fn a_miss_triggers_one_load_shared_by_20_concurrent_lookups() {
    let sim = start(&cluster_yaml(3)).await;
    let mut config = single_zone();
    config.cache_period = LONG;
    let instances = Arc::new(instances(&sim, config).await);
    // Every call takes 100 ms, so all 20 lookups wait on the same load.
    sim.set_knobs(|k| k.latency_ms = 100);

    sim.reset_log();
    let cold = concurrent_metadata(&instances, "worker-1", 20).await;
    assert!(cold.iter().all(|r| r.is_ok()), "{cold:?}");
    assert_eq!((sim.count(QUERY), sim.count(VAPP_OR_VM)), (1, 1));

    // A VM created after the load: a miss, one shared reload.
    add_worker(&sim, "worker-new", "10.0.0.99");
    sim.reset_log();
    let new = concurrent_metadata(&instances, "worker-new", 20).await;
    assert!(new.iter().all(|r| r.is_ok()), "{new:?}");
    assert_eq!((sim.count(QUERY), sim.count(VAPP_OR_VM)), (1, 1));

    // A name that is nowhere: one shared reload, then not found for all.
    sim.reset_log();
    let missing = concurrent_metadata(&instances, "worker-none", 20).await;
    assert!(
        missing
            .iter()
            .all(|r| matches!(r, Err(InstancesError::NotFound { .. }))),
        "{missing:?}"
    );
    assert_eq!((sim.count(QUERY), sim.count(VAPP_OR_VM)), (1, 1));

    // Hits cost nothing.
    sim.reset_log();
    concurrent_metadata(&instances, "worker-0", 20).await;
    assert_eq!(inventory_calls(&sim), 0);
}

#[tokio::test]
async fn loads_expire_after_the_cache_period() {
    let sim = start(&cluster_yaml(3)).await;
    let mut config = single_zone();
    config.cache_period = Duration::from_millis(300);
    let instances = instances(&sim, config).await;
    let node = NodeRef::named("worker-2");

    sim.reset_log();
    instances.instance_metadata(&node).await.unwrap();
    instances.instance_metadata(&node).await.unwrap();
    assert_eq!(inventory_calls(&sim), 2, "one load: a query and a vApp GET");

    // A change inside the period is not seen; after it, it is.
    let urn = vm_urn(&sim, "worker-2");
    sim.with_world(|w| {
        w.vms.iter_mut().find(|vm| vm.id == urn).unwrap().nics[0].ip = "10.0.0.222".into();
    });
    let before = instances.instance_metadata(&node).await.unwrap();
    assert_eq!(before.addresses[0].address, "10.0.0.12");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let after = instances.instance_metadata(&node).await.unwrap();
    assert_eq!(after.addresses[0].address, "10.0.0.222");
    assert_eq!(inventory_calls(&sim), 4);
}

#[tokio::test]
async fn a_failing_load_surfaces_its_error_to_every_waiter_and_the_next_call_recovers() {
    let sim = start(&cluster_yaml(3)).await;
    let mut config = single_zone();
    config.power_state_max_age = Duration::ZERO;
    let instances = Arc::new(instances(&sim, config).await);
    sim.set_knobs(|k| k.latency_ms = 50);
    sim.add_fault(
        FaultRule::new(
            Some("GET"),
            "/api/query",
            FaultAction::Error {
                status: 400,
                minor_error_code: "BAD_REQUEST".into(),
                message: "injected query failure".into(),
            },
        )
        .times(1),
    );
    sim.reset_log();
    let failed = concurrent_metadata(&instances, "worker-0", 20).await;
    for result in &failed {
        let error = result.as_ref().unwrap_err();
        assert!(matches!(error, InstancesError::Inventory { .. }), "{error}");
        let message = error.to_string();
        assert!(
            message.contains("vApp 'cluster1'") && message.contains("injected query failure"),
            "{message}"
        );
    }
    assert_eq!(sim.count(QUERY), 1, "the waiters share the failed load");

    let recovered = instances
        .instance_metadata(&NodeRef::named("worker-0"))
        .await
        .unwrap();
    assert_eq!(recovered.provider_id, provider_id(&sim, "worker-0"));

    // A failing vApp GET surfaces too, as does a failing power-state read.
    sim.add_fault(
        FaultRule::new(
            Some("GET"),
            "/api/vApp/{reference}",
            FaultAction::Error {
                status: 400,
                minor_error_code: "BAD_REQUEST".into(),
                message: "injected vApp failure".into(),
            },
        )
        .times(1),
    );
    let error = instances
        .instance_exists(&NodeRef::named("worker-0"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, InstancesError::PowerState { .. }),
        "{error}"
    );
    assert!(
        instances
            .instance_exists(&NodeRef::named("worker-0"))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn initialising_100_nodes_takes_at_most_5_calls() {
    let sim = start(&cluster_yaml(100)).await;
    let instances = instances(&sim, single_zone()).await;
    let connect_calls = vcd::total_calls(&sim);

    // What the cloud node controller does for each new node.
    sim.reset_log();
    let mut provider_ids = Vec::new();
    for i in 0..100 {
        let name = format!("worker-{i}");
        let metadata = instances
            .instance_metadata(&NodeRef::named(&name))
            .await
            .unwrap();
        assert_eq!(
            metadata.addresses[0].address,
            format!("10.0.0.{}", i % 200 + 10)
        );
        provider_ids.push((name, metadata.provider_id));
    }
    let init_calls = vcd::total_calls(&sim);
    let counters = sim.counters();

    // The periodic address refresh, by providerID, inside the cache period.
    sim.reset_log();
    for (name, id) in &provider_ids {
        instances
            .instance_metadata(&NodeRef::named(name).with_provider_id(id))
            .await
            .unwrap();
    }
    let refresh_calls = vcd::total_calls(&sim);

    println!("initialise 100 nodes (InstanceMetadata x100):");
    println!("  client connect (version + login): {connect_calls} calls");
    for (key, count) in &counters {
        println!("  {key}: {count}");
    }
    println!("  inventory calls for 100 nodes: {init_calls}");
    println!("  total including connect: {}", connect_calls + init_calls);
    println!("  again by providerID within the cache period: {refresh_calls} calls");
    println!("  (upstream CCM: 13 calls per node, 1300 in total)");
    assert!(
        connect_calls + init_calls <= 5,
        "{connect_calls} + {init_calls}"
    );
    assert_eq!(refresh_calls, 0);
}

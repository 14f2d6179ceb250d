//! The service engine group as a policy decision (contract 0.3.0) through
//! the service controller: a Service placed in a group by annotation, kept
//! there when the annotation goes, moved by naming another group, and
//! refused before any write where the group has no room.

use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use crate::support::lb::add_engine_group;
use crate::support::poll::holds_across;

const GROUP: &str = "vcd-ccm.io/service-engine-group";

/// The edge gateway gets a second group, `gold-seg`, with room for one
/// virtual service beside the scenario's `seg1`.
async fn cluster_with_gold() -> Cluster {
    Cluster::start_with(fast_config(), |c| add_engine_group(&c.vcd, "gold-seg", 1)).await
}

/// The group each virtual service of the Service `name` runs on.
fn groups_of(cluster: &Cluster, name: &str) -> Vec<String> {
    cluster.vcd.with_world(|w| {
        w.virtual_services
            .iter()
            .filter(|vs| vs.name.contains(&format!("default.{name}-")))
            .map(|vs| {
                w.service_engine_groups
                    .iter()
                    .find(|g| g.id == vs.service_engine_group_ref.id)
                    .map_or_else(|| "?".into(), |g| g.name.clone())
            })
            .collect()
    })
}

async fn annotate(cluster: &Cluster, name: &str, group: Option<&str>) {
    cluster
        .services("default")
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {GROUP: group}}})),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_runs_in_the_group_its_policy_names() {
    let cluster = cluster_with_gold().await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["metadata"]["annotations"] = json!({GROUP: "gold-seg"});
    cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "web").await;
    assert_eq!(groups_of(&cluster, "web"), ["gold-seg"]);

    // gold-seg is full now: a second Service asking for it is refused
    // before anything is written for it, with the room and what works.
    let mut body = lb_service("api", &[(81, 30081)]);
    body["metadata"]["annotations"] = json!({GROUP: "gold-seg"});
    cluster.create_service("default", body).await;
    let message = cluster
        .wait_for_event("default", "api", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains("service engine group gold-seg has room for 0 more"),
        "{message}"
    );
    let api_objects = || {
        cluster.vcd.with_world(|w| {
            w.pools.iter().any(|p| p.name.contains("default.api-"))
                || w.virtual_services
                    .iter()
                    .any(|v| v.name.contains("default.api-"))
        })
    };
    holds_across(
        "nothing written for api",
        1,
        || cluster.syncs(),
        || !api_objects(),
    )
    .await;
    // Without the annotation it goes to the first group with room.
    annotate(&cluster, "api", None).await;
    cluster.wait_for_ip("default", "api").await;
    assert_eq!(groups_of(&cluster, "api"), ["seg1"]);

    // Without its annotation web stays where it runs; naming seg1 moves it.
    annotate(&cluster, "web", None).await;
    holds_across(
        "web stays in gold-seg",
        1,
        || cluster.syncs(),
        || groups_of(&cluster, "web") == ["gold-seg"],
    )
    .await;
    annotate(&cluster, "web", Some("seg1")).await;
    wait_for("web moved to seg1", || async {
        (groups_of(&cluster, "web") == ["seg1"]).then_some(())
    })
    .await;

    // A group the gateway lacks is named in the refusal, with the groups it has.
    annotate(&cluster, "web", Some("platinum")).await;
    let message = wait_for("the refusal of platinum", || async {
        cluster
            .events("default", "web")
            .await
            .into_iter()
            .map(|(_, message)| message)
            .find(|m| m.contains("platinum"))
    })
    .await;
    assert!(message.contains("assigned: seg1, gold-seg"), "{message}");
    assert_eq!(groups_of(&cluster, "web"), ["seg1"]);
}

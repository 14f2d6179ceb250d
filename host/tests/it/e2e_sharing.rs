//! Sharing keys through the service controller: Services of one namespace
//! with the same `vcd-ccm.io/sharing-key` get one external address, each
//! with its own virtual services; a port collision is refused on the later
//! Service, naming the other one, and writes nothing; the address (and its
//! IP Space claim) lives until the last sharer goes; another namespace gets
//! its own address under the default policy; one-arm mode refuses keys.

use serde_json::{Value, json};

use crate::support::CLUSTER;
use crate::support::cluster::{
    Cluster, ServiceControllerConfig, fast_config, lb_service, wait_for,
};
use crate::support::lb::{self, ModeKind};
use crate::support::objects::ServiceEdits;
use crate::support::policies::default_policy_as;

const KEY: &str = "vcd-ccm.io/sharing-key";

fn keyed(name: &str, ports: &[(i32, i32)], key: &str) -> Value {
    let mut body = lb_service(name, ports);
    body["metadata"]["annotations"] = json!({KEY: key});
    body
}

async fn cluster_in(scenario: vcdsim::Scenario, mode: ModeKind) -> Cluster {
    let cluster = Cluster::start_on(scenario, fast_config(), |c| {
        c.lb_config = lb::config(CLUSTER, mode);
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster
}

/// Addresses the gateway's virtual services and NAT rules of `uid` use.
fn addresses_of(cluster: &Cluster, uid: &str) -> Vec<String> {
    let mut addresses: Vec<String> = lb::objects_of(&cluster.vcd, uid)
        .into_iter()
        .map(|o| o.address)
        .filter(|a| !a.is_empty())
        .collect();
    addresses.sort();
    addresses.dedup();
    addresses
}

/// `default/web` (port 80), then `default/api` (8080), with one key: both
/// on one address. Their uids and the address.
async fn sharing_pair(cluster: &Cluster) -> (String, String, String) {
    let web = cluster
        .create_service("default", keyed("web", &[(80, 30080)], "front"))
        .await;
    let ip = cluster.wait_for_ip("default", "web").await;
    let api = cluster
        .create_service("default", keyed("api", &[(8080, 30081)], "front"))
        .await;
    assert_eq!(cluster.wait_for_ip("default", "api").await, ip);
    (web, api, ip)
}

async fn failure(cluster: &Cluster, namespace: &str, name: &str) -> String {
    cluster
        .wait_for_event(namespace, name, "SyncLoadBalancerFailed")
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_with_one_key_share_an_address_until_the_last_goes() {
    let cluster = cluster_in(lb::blocks_scenario(), ModeKind::SharedVip).await;
    let (web, api, ip) = sharing_pair(&cluster).await;
    assert_eq!(addresses_of(&cluster, &web), vec![ip.clone()]);
    assert_eq!(addresses_of(&cluster, &api), vec![ip.clone()]);

    // Another namespace's Service with the same key: the default policy
    // shares within a namespace only.
    cluster
        .kube
        .seed(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}))
        .expect("the namespace is seeded");
    cluster
        .create_service("team", keyed("web", &[(80, 30082)], "front"))
        .await;
    assert_ne!(cluster.wait_for_ip("team", "web").await, ip);

    cluster.delete_service("default", "web").await;
    cluster.wait_for_gone("default", "web").await;
    assert!(lb::objects_of(&cluster.vcd, &web).is_empty());
    assert_eq!(addresses_of(&cluster, &api), vec![ip.clone()], "api stays");
    cluster.delete_service("default", "api").await;
    cluster.wait_for_gone("default", "api").await;
    assert!(
        lb::objects(&cluster.vcd).iter().all(|o| o.address != ip),
        "the address is free once the last sharer is gone"
    );
}

/// Sharers synced at the same moment by different workers, while VCD takes
/// its time over each write: one address from the first, not one each
/// that a later sync would have to move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharers_created_together_take_one_address_from_the_start() {
    let config = ServiceControllerConfig {
        workers: 4,
        ..fast_config()
    };
    let cluster = Cluster::start_on(lb::blocks_scenario(), config, |c| {
        c.lb_config = lb::config(CLUSTER, ModeKind::SharedVip);
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.vcd.set_knobs(|k| k.task_duration_ms = 150);
    let names = ["a", "b", "c", "d"];
    let mut uids = Vec::new();
    for (i, name) in (0i32..).zip(names) {
        let body = keyed(name, &[(80 + i, 30080 + i)], "together");
        uids.push(cluster.create_service("default", body).await);
    }
    let mut first_seen = Vec::new();
    for name in names {
        first_seen.push(cluster.wait_for_ip("default", name).await);
    }
    first_seen.dedup();
    assert_eq!(
        first_seen.len(),
        1,
        "one address from the start: {first_seen:?}"
    );
    for uid in &uids {
        assert_eq!(addresses_of(&cluster, uid), first_seen);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_and_udp_on_one_port_share_an_address() {
    let cluster = cluster_in(lb::blocks_scenario(), ModeKind::SharedVip).await;
    cluster
        .create_service("default", keyed("dns-tcp", &[(53, 30053)], "dns"))
        .await;
    let ip = cluster.wait_for_ip("default", "dns-tcp").await;
    let mut udp = keyed("dns-udp", &[(53, 30054)], "dns");
    udp["spec"]["ports"][0]["protocol"] = json!("UDP");
    let uid = cluster.create_service("default", udp).await;
    assert_eq!(cluster.wait_for_ip("default", "dns-udp").await, ip);
    assert_eq!(addresses_of(&cluster, &uid), vec![ip]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_collision_names_the_other_service_and_writes_nothing() {
    let cluster = cluster_in(lb::blocks_scenario(), ModeKind::SharedVip).await;
    cluster
        .create_service("default", keyed("web", &[(80, 30080)], "front"))
        .await;
    let ip = cluster.wait_for_ip("default", "web").await;
    let clash = cluster
        .create_service("default", keyed("clash", &[(80, 30081)], "front"))
        .await;
    let message = failure(&cluster, "default", "clash").await;
    for expected in [
        format!("port 80 on {ip}"),
        "Service default/web".to_string(),
        "need distinct ports".to_string(),
        "nothing was changed in VCD".to_string(),
    ] {
        assert!(message.contains(&expected), "{expected}: {message}");
    }
    assert!(lb::objects_of(&cluster.vcd, &clash).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ip_space_claim_passes_to_the_last_sharer() {
    let cluster = cluster_in(lb::spaces_scenario(), ModeKind::SharedVip).await;
    let (web, api, ip) = sharing_pair(&cluster).await;
    let claims = |uid: &str| -> Vec<String> {
        lb::allocations(&cluster.vcd)
            .into_iter()
            .filter(|(_, description)| description.contains(uid))
            .map(|(value, _)| value)
            .collect()
    };
    assert_eq!(claims(&web), vec![ip.clone()], "the first sharer claims it");
    assert!(claims(&api).is_empty(), "one claim per address");

    cluster.delete_service("default", "web").await;
    cluster.wait_for_gone("default", "web").await;
    assert_eq!(claims(&api), vec![ip.clone()], "the claim passed to api");
    assert_eq!(addresses_of(&cluster, &api), vec![ip.clone()]);

    cluster.delete_service("default", "api").await;
    cluster.wait_for_gone("default", "api").await;
    assert!(
        lb::allocations(&cluster.vcd).iter().all(|(v, _)| *v != ip),
        "released with the last sharer"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_vip_one_arm_shares_the_external_address() {
    let cluster = cluster_in(lb::blocks_scenario(), ModeKind::SharedVipOneArm).await;
    let (web, api, ip) = sharing_pair(&cluster).await;
    for uid in [&web, &api] {
        let dnat: Vec<String> = lb::objects_of(&cluster.vcd, uid)
            .into_iter()
            .filter(|o| o.kind == "nat rule")
            .map(|o| o.address)
            .collect();
        assert_eq!(dnat, vec![ip.clone()], "each Service's DNAT rule");
    }
    let clash = cluster
        .create_service("default", keyed("clash", &[(8080, 30082)], "front"))
        .await;
    let message = failure(&cluster, "default", "clash").await;
    assert!(message.contains("Service default/api"), "{message}");
    assert!(lb::objects_of(&cluster.vcd, &clash).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_arm_mode_and_malformed_keys_are_refused_before_any_write() {
    let cluster = cluster_in(lb::blocks_scenario(), ModeKind::OneArm).await;
    let web = cluster
        .create_service("default", keyed("web", &[(80, 30080)], "front"))
        .await;
    let message = failure(&cluster, "default", "web").await;
    assert!(
        message.contains("cannot be shared in one-arm mode")
            && message.contains("enableVirtualServiceSharedIP"),
        "{message}"
    );
    let bad = cluster
        .create_service("default", keyed("bad", &[(81, 30081)], "not a key!"))
        .await;
    let message = failure(&cluster, "default", "bad").await;
    assert!(
        message.contains(r#"vcd-ccm.io/sharing-key: "not a key!" is not a sharing key"#),
        "{message}"
    );
    assert!(lb::objects_of(&cluster.vcd, &web).is_empty());
    assert!(lb::objects_of(&cluster.vcd, &bad).is_empty());
}

/// A Service that drops its key no longer shares: it moves to an address
/// of its own and the others keep theirs, with the IP Space claim.
async fn leaving_the_group_moves_only_the_leaver(scenario: vcdsim::Scenario, spaces: bool) {
    let cluster = cluster_in(scenario, ModeKind::SharedVip).await;
    let (web, api, ip) = sharing_pair(&cluster).await;
    cluster
        .patch_service(
            "default",
            "web",
            json!({"metadata": {"annotations": {KEY: null}}}),
        )
        .await;
    let moved = wait_for(&format!("web moves off {ip}"), || async {
        let now = addresses_of(&cluster, &web);
        (now.len() == 1 && now[0] != ip).then_some(now)
    })
    .await;
    wait_for("web's status reports its new address", || async {
        let service = cluster.service("default", "web").await?;
        let ingress = service.status?.load_balancer?.ingress?;
        (ingress.first()?.ip.as_deref() == Some(moved[0].as_str())).then_some(())
    })
    .await;
    assert_eq!(addresses_of(&cluster, &api), vec![ip.clone()], "api stays");
    let holders: Vec<bool> = lb::allocations(&cluster.vcd)
        .into_iter()
        .filter(|(value, _)| *value == ip)
        .map(|(_, tag)| tag.contains(&api))
        .collect();
    let expected = if spaces { vec![true] } else { Vec::new() };
    assert_eq!(holders, expected, "on IP Spaces api holds the claim");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_group_on_ip_blocks_moves_only_the_leaver() {
    leaving_the_group_moves_only_the_leaver(lb::blocks_scenario(), false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leaving_the_group_on_ip_spaces_hands_the_claim_over() {
    leaving_the_group_moves_only_the_leaver(lb::spaces_scenario(), true).await;
}

/// A provider policy may let namespaces share: here the default policy
/// with `shareAcrossNamespaces`, governing namespaces labelled for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_that_allows_it_shares_across_namespaces() {
    let dir = tempfile::tempdir().expect("a policy directory");
    default_policy_as(
        dir.path(),
        "across",
        "    config: {shareAcrossNamespaces: true}\n    selector:\n      namespaceSelector:\n        matchLabels: {sharing: across}\n",
    );
    let cluster = Cluster::start_with(fast_config(), |c| {
        c.policy_dir = Some(dir.path().to_path_buf());
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    for namespace in ["red", "blue"] {
        cluster
            .kube
            .seed(json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": namespace, "labels": {"sharing": "across"}}}))
            .expect("the namespace is seeded");
    }
    cluster
        .create_service("red", keyed("web", &[(80, 30080)], "front"))
        .await;
    let ip = cluster.wait_for_ip("red", "web").await;
    let api = cluster
        .create_service("blue", keyed("api", &[(8080, 30081)], "front"))
        .await;
    assert_eq!(cluster.wait_for_ip("blue", "api").await, ip);
    assert_eq!(addresses_of(&cluster, &api), vec![ip]);
}

//! HTTP rules (contract 0.3.0) through the service controller: the default
//! policy's annotations become each virtual service's request, response
//! and security rules; a change writes only the lists it changes; bad
//! values and a VCD older than API 38.0 are refused before any write; the
//! drift check restores a list edited by hand.

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::support::cluster::{
    Cluster, ServiceControllerConfig, fast_config, lb_service, wait_for,
};
use crate::support::lb::blocks_scenario;
use crate::support::poll::holds_across;

/// Each virtual service's rules by listen port: the names in each list.
type Lists = BTreeMap<u32, [Vec<String>; 3]>;

fn lists(cluster: &Cluster) -> Lists {
    cluster.vcd.with_world(|w| {
        w.virtual_services
            .iter()
            .map(|vs| {
                let id = vs.id.clone().unwrap_or_default();
                let policies = w.http_policies.iter().find(|p| p.virtual_service_id == id);
                let names =
                    |f: &dyn Fn(&vcdsim::world::http_rules::HttpPolicies) -> Vec<String>| {
                        policies.map(f).unwrap_or_default()
                    };
                (
                    vs.service_ports[0].port_start,
                    [
                        names(&|p| p.request_rules.iter().map(|r| r.name.clone()).collect()),
                        names(&|p| p.response_rules.iter().map(|r| r.name.clone()).collect()),
                        names(&|p| p.security_rules.iter().map(|r| r.name.clone()).collect()),
                    ],
                )
            })
            .collect()
    })
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The security rules as VCD holds them, of the virtual service on `port`.
fn security(cluster: &Cluster, port: u32) -> Value {
    cluster.vcd.with_world(|w| {
        let vs = w
            .virtual_services
            .iter()
            .find(|vs| vs.service_ports[0].port_start == port)
            .expect("the virtual service");
        let policies = w
            .http_policies
            .iter()
            .find(|p| Some(&p.virtual_service_id) == vs.id.as_ref())
            .expect("its HTTP policies");
        json!(policies.security_rules)
    })
}

/// The PUTs of the list `kind` that VCD took.
fn puts(cluster: &Cluster, kind: &str) -> usize {
    let suffix = format!("/httpPolicy/{kind}");
    cluster
        .vcd
        .requests()
        .iter()
        .filter(|e| e.method == "PUT" && e.path.ends_with(&suffix) && e.status < 300)
        .count()
}

fn web() -> Value {
    let mut body = lb_service("web", &[(80, 30080), (443, 30443)]);
    body["spec"]["ports"][0]["appProtocol"] = json!("http");
    body["spec"]["ports"][1]["appProtocol"] = json!("https");
    body["metadata"]["annotations"] = json!({
        "service.beta.kubernetes.io/vcloud-avi-ssl-ports": "443",
        "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias": "my-cert",
        "vcd-ccm.io/https-redirect": "true",
        "vcd-ccm.io/forwarded-headers": "true",
        "vcd-ccm.io/hsts": "max-age=31536000; includeSubDomains",
        "vcd-ccm.io/rate-limit": "100/1s",
    });
    body
}

async fn annotate(cluster: &Cluster, annotations: Value) {
    cluster
        .services("default")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": annotations}})),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn annotations_become_rule_lists_and_a_change_writes_only_its_list() {
    let cluster = Cluster::start_with(fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.create_service("default", web()).await;
    cluster.wait_for_ip("default", "web").await;
    let want: Lists = [
        (
            80,
            [
                names(&["forwarded-headers"]),
                vec![],
                names(&["https-redirect", "rate-limit"]),
            ],
        ),
        (
            443,
            [
                names(&["forwarded-headers"]),
                names(&["hsts"]),
                names(&["rate-limit"]),
            ],
        ),
    ]
    .into();
    wait_for("the rules on both virtual services", || async {
        (lists(&cluster) == want).then_some(())
    })
    .await;
    let plain = security(&cluster, 80);
    assert_eq!(plain[0]["redirectToHttpsAction"]["port"], 443);
    let limit = &plain[1]["rateLimitAction"];
    assert_eq!(
        (
            &limit["count"],
            &limit["period"],
            &limit["localResponseAction"]["statusCode"]
        ),
        (&json!(100), &json!(1), &json!(429))
    );

    // A new rate: the security lists alone are written again.
    let (request, response) = (
        puts(&cluster, "requestRules"),
        puts(&cluster, "responseRules"),
    );
    let security_before = puts(&cluster, "securityRules");
    annotate(&cluster, json!({"vcd-ccm.io/rate-limit": "6000/1m"})).await;
    wait_for("the new rate", || async {
        (security(&cluster, 443)[0]["rateLimitAction"]["period"] == json!(60)).then_some(())
    })
    .await;
    assert_eq!(puts(&cluster, "securityRules"), security_before + 2);
    assert_eq!(puts(&cluster, "requestRules"), request);
    assert_eq!(puts(&cluster, "responseRules"), response);

    // A bad value is refused and changes nothing.
    annotate(&cluster, json!({"vcd-ccm.io/hsts": "forever"})).await;
    let refusal = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert!(
        refusal.contains("vcd-ccm.io/hsts") && refusal.contains("max-age=<seconds>"),
        "{refusal}"
    );
    let before = lists(&cluster);
    holds_across(
        "the rules kept",
        1,
        || cluster.syncs(),
        || lists(&cluster) == before,
    )
    .await;

    // No annotations: every list emptied, the virtual services kept.
    annotate(
        &cluster,
        json!({
            "vcd-ccm.io/https-redirect": null,
            "vcd-ccm.io/forwarded-headers": null,
            "vcd-ccm.io/hsts": null,
            "vcd-ccm.io/rate-limit": null,
        }),
    )
    .await;
    let none: Lists = [(80, Default::default()), (443, Default::default())].into();
    wait_for("no rules", || async {
        (lists(&cluster) == none).then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_on_a_vcd_before_api_38_are_refused_naming_the_version() {
    let mut scenario = blocks_scenario();
    scenario.api_versions = vec!["37.2".into()];
    let cluster = Cluster::start_on(scenario, fast_config(), |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.create_service("default", web()).await;
    let message = cluster
        .wait_for_event("default", "web", "SyncLoadBalancerFailed")
        .await;
    assert!(
        message.contains("API 38.0") && message.contains("37.2"),
        "{message}"
    );
    cluster.holds_no_load_balancer().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_list_edited_by_hand_is_restored_by_the_drift_check() {
    let config = ServiceControllerConfig {
        drift_period: Some(Duration::from_millis(400)),
        ..fast_config()
    };
    let cluster = Cluster::start_with(config, |_| {}).await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    cluster.create_service("default", web()).await;
    cluster.wait_for_ip("default", "web").await;
    wait_for("the rules written", || async {
        (lists(&cluster)[&80][2].len() == 2).then_some(())
    })
    .await;
    let written = security(&cluster, 80);
    // Someone drops the redirect in VCD.
    cluster.vcd.with_world(|w| {
        let vs = w
            .virtual_services
            .iter()
            .find(|vs| vs.service_ports[0].port_start == 80)
            .and_then(|vs| vs.id.clone());
        let policies = w
            .http_policies
            .iter_mut()
            .find(|p| Some(&p.virtual_service_id) == vs.as_ref())
            .unwrap();
        policies.security_rules.remove(0);
    });
    let repaired = cluster
        .wait_for_event("default", "web", "LoadBalancerRepaired")
        .await;
    assert!(repaired.contains("wrote securityRules"), "{repaired}");
    assert_eq!(security(&cluster, 80), written);
    // The other lists were read, found as written, and left alone.
    assert_eq!(puts(&cluster, "requestRules"), 2);
    assert_eq!(puts(&cluster, "responseRules"), 1);
}

//! The managed gateway firewall end to end: an allow rule per Service from
//! its source ranges, kept in step with the Service, removed with it and by
//! the sweep, and never a change to anyone else's rule.

use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};
use vcdsim::world::firewall::{FirewallRule, FirewallRuleBody};
use vcdsim::world::{Ref, World};

use crate::support::cluster::{Cluster, fast_config, lb_service, wait_for};
use crate::support::dual_stack;
use crate::support::faults::assert_fired;
use crate::support::objects::ServiceEdits;

/// The firewall's IP sets (pools' member sets left out).
fn firewall_sets(w: &World) -> usize {
    w.firewall_groups
        .iter()
        .filter(|g| g.body.name.starts_with("ingress-fw-"))
        .count()
}

fn foreign_rule(gateway_id: &str) -> FirewallRule {
    FirewallRule {
        gateway_id: gateway_id.to_string(),
        body: serde_json::from_value(json!({
            "id": "urn:vcloud:firewallRule:0d2a0c3e-1111-4222-8333-944445555666",
            "name": "ssh-from-office",
            "description": "kept by the network team",
            "ipProtocol": "IPV4",
            "actionValue": "ALLOW",
            "direction": "IN",
            "logging": true,
            "enabled": true,
            "comments": "do not touch",
            "version": {"version": 7}
        }))
        .unwrap(),
    }
}

async fn start() -> (Cluster, FirewallRule) {
    let mut foreign = None;
    let cluster = Cluster::start_with(fast_config(), |c| {
        c.lb_config.manage_firewall = true;
        foreign = Some(c.vcd.with_world(|w| {
            let rule = foreign_rule(&w.gateways[0].id);
            w.firewall_rules.push(rule.clone());
            rule
        }));
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    (cluster, foreign.unwrap())
}

/// The Service's rule and the addresses of its source and destination sets.
#[derive(Debug)]
struct Seen {
    rule: FirewallRuleBody,
    sources: Option<Vec<String>>,
    destinations: Vec<String>,
    ports: Value,
}

fn addresses(world: &World, refs: &Option<Vec<Ref>>) -> Option<Vec<String>> {
    let group = refs.as_ref()?.first()?;
    let found = world
        .firewall_groups
        .iter()
        .find(|g| g.body.id.as_deref() == Some(group.id.as_str()))?;
    found.body.ip_addresses.clone()
}

fn seen(cluster: &Cluster, uid: &str) -> Option<Seen> {
    let needle = format!(" uid={uid}");
    cluster.vcd.with_world(|w| {
        let rule = w
            .firewall_rules
            .iter()
            .find(|r| {
                r.body
                    .description
                    .as_deref()
                    .is_some_and(|d| d.contains(&needle))
            })?
            .body
            .clone();
        let profile = rule.application_port_profiles.as_ref()?.first()?.id.clone();
        let ports = w
            .port_profiles
            .iter()
            .find(|p| p.id.as_deref() == Some(profile.as_str()))
            .map(|p| json!(p.application_ports))?;
        Some(Seen {
            sources: addresses(w, &rule.source_firewall_groups),
            destinations: addresses(w, &rule.destination_firewall_groups)?,
            ports,
            rule,
        })
    })
}

fn user_rules(cluster: &Cluster) -> Vec<String> {
    cluster.vcd.with_world(|w| {
        w.firewall_rules
            .iter()
            .map(|r| r.body.name.clone())
            .collect()
    })
}

/// Writes to firewall rules, IP sets and port profiles so far (the IP sets
/// pools take their members from left out).
fn firewall_writes(cluster: &Cluster) -> u64 {
    let member_set = |body: &Value| {
        body["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("ingress-nodes-"))
    };
    cluster
        .vcd
        .requests()
        .iter()
        .filter(|e| {
            e.method != "GET"
                && (e.template.contains("/firewall")
                    || e.template.contains("/applicationPortProfiles"))
                && !member_set(&e.request_body)
        })
        .count() as u64
}

async fn set_ranges(cluster: &Cluster, ranges: Value) {
    cluster
        .services("default")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"loadBalancerSourceRanges": ranges}})),
        )
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_managed_rule_follows_the_service_and_leaves_other_rules_alone() {
    let (cluster, foreign) = start().await;
    let mut body = lb_service("web", &[(80, 30080), (443, 30443)]);
    body["spec"]["loadBalancerSourceRanges"] = json!(["192.0.2.0/24"]);
    let uid = cluster.create_service("default", body).await;
    let ip = cluster.wait_for_ip("default", "web").await;

    let first = wait_for("the Service's firewall rule", || async {
        seen(&cluster, &uid)
    })
    .await;
    assert_eq!(first.sources, Some(vec!["192.0.2.0/24".to_string()]));
    assert_eq!(first.destinations, [ip]);
    assert_eq!(
        first.ports,
        json!([{"name": null, "protocol": "TCP", "destinationPorts": ["80", "443"]}])
    );
    assert_eq!(first.rule.action_value.as_deref(), Some("ALLOW"));
    assert_eq!(first.rule.ip_protocol.as_deref(), Some("IPV4"));
    // Appended after the rule that was there, which is unchanged.
    assert_eq!(
        user_rules(&cluster),
        [foreign.body.name.clone(), first.rule.name.clone()]
    );
    let kept = cluster.vcd.with_world(|w| w.firewall_rules[0].body.clone());
    assert_eq!(kept, foreign.body);
    assert!(
        cluster
            .events("default", "web")
            .await
            .iter()
            .all(|(r, _)| r != "SourceRangesNotEnforced"),
        "enforced ranges get no warning"
    );

    // A node joins: the pools change, the firewall is not written.
    let before = firewall_writes(&cluster);
    cluster.add_node("worker-1", "10.0.0.12").await;
    wait_for("the new node in the pools", || async {
        (cluster.pool_members(&uid).iter().all(|m| m.len() == 2)).then_some(())
    })
    .await;
    assert_eq!(firewall_writes(&cluster), before);

    // New ranges, one IPv6: the source set and the protocol follow.
    set_ranges(&cluster, json!(["198.51.100.0/24", "2001:db8::/32"])).await;
    wait_for("the new ranges", || async {
        seen(&cluster, &uid)
            .filter(|s| {
                s.sources.as_deref()
                    == Some(&["198.51.100.0/24".to_string(), "2001:db8::/32".to_string()][..])
                    && s.rule.ip_protocol.as_deref() == Some("IPV4_IPV6")
            })
            .map(drop)
    })
    .await;

    // No ranges: any source, and the source set is gone.
    set_ranges(&cluster, Value::Null).await;
    wait_for("any source", || async {
        seen(&cluster, &uid)
            .filter(|s| s.sources.is_none() && s.rule.source_firewall_groups.is_none())
            .map(drop)
    })
    .await;
    wait_for("one IP set left", || async {
        (cluster.vcd.with_world(|w| firewall_sets(w)) == 1).then_some(())
    })
    .await;

    // Deleted: every firewall object goes, the other rule stays as it was.
    cluster.delete_service("default", "web").await;
    cluster.wait_for_gone("default", "web").await;
    let (rules, groups, profiles) = cluster.vcd.with_world(|w| {
        (
            w.firewall_rules
                .iter()
                .map(|r| r.body.clone())
                .collect::<Vec<_>>(),
            firewall_sets(w),
            w.port_profiles
                .iter()
                .filter(|p| p.name.starts_with("ingress-fw-"))
                .count(),
        )
    });
    assert_eq!(rules, [foreign.body]);
    assert_eq!((groups, profiles), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_sweeps_the_firewall_objects_of_services_deleted_while_down() {
    let (mut cluster, foreign) = start().await;
    let mut body = lb_service("web", &[(53, 30053)]);
    body["spec"]["ports"][0]["protocol"] = json!("UDP");
    let uid = cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "web").await;
    let rule = wait_for("the rule", || async { seen(&cluster, &uid) }).await;
    assert_eq!(
        rule.ports,
        json!([{"name": null, "protocol": "UDP", "destinationPorts": ["53"]}])
    );
    cluster.controller_stop();
    cluster
        .services("default")
        .patch_status(
            "web",
            &Default::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    cluster.delete_service("default", "web").await;
    cluster.start_controller(fast_config()).await;
    assert_eq!(user_rules(&cluster), [foreign.body.name]);
    assert_eq!(cluster.vcd.with_world(|w| firewall_sets(w)), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_edited_during_the_list_write_is_kept_and_the_write_tried_again() {
    const RULES: &str = "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules";
    let (cluster, foreign) = start().await;
    // The list PUT is held up while someone edits the other rule.
    cluster.vcd.add_fault(vcdsim::FaultRule {
        times: Some(1),
        ..vcdsim::FaultRule::new(Some("PUT"), RULES, vcdsim::FaultAction::Delay { ms: 1500 })
    });
    let uid = cluster
        .create_service("default", lb_service("web", &[(80, 30080)]))
        .await;
    // The read the list write is built from follows the port profile's
    // creation; once it is logged, the write is held up by the fault.
    let list_read = || {
        let log = cluster.vcd.requests();
        let profile = log.iter().rposition(|r| {
            r.method == "POST" && r.template == "/cloudapi/1.0.0/applicationPortProfiles"
        });
        profile.is_some_and(|at| {
            log[at..]
                .iter()
                .any(|r| r.method == "GET" && r.template == RULES)
        })
    };
    wait_for("the list read before the write", || async {
        list_read().then_some(())
    })
    .await;
    let edited = cluster.vcd.with_world(|w| {
        let rule = &mut w.firewall_rules[0].body;
        rule.comments = Some("edited meanwhile".into());
        rule.version = Some(vcdsim::world::nat::ObjectVersion { version: 8 });
        rule.clone()
    });
    let ours = wait_for("the Service's rule", || async { seen(&cluster, &uid) }).await;
    assert_fired(&cluster.vcd, "the delayed rule list write");
    assert_eq!(
        cluster.vcd.count(&format!("PUT {RULES}")),
        2,
        "refused once, then written"
    );
    let rules = cluster.vcd.with_world(|w| {
        w.firewall_rules
            .iter()
            .map(|r| r.body.clone())
            .collect::<Vec<_>>()
    });
    assert_eq!(rules[0], edited, "the edit made meanwhile survives");
    assert_ne!(rules[0], foreign.body);
    assert_eq!(rules[1].name, ours.rule.name);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_answers_to_firewall_writes_leave_no_duplicate_and_nothing_behind() {
    let (cluster, foreign) = start().await;
    for (method, path) in [
        ("POST", "/cloudapi/1.0.0/firewallGroups"),
        ("POST", "/cloudapi/1.0.0/applicationPortProfiles"),
        ("PUT", "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules"),
    ] {
        cluster.vcd.add_fault(vcdsim::FaultRule {
            times: Some(1),
            ..vcdsim::FaultRule::new(Some(method), path, vcdsim::FaultAction::LoseAnswer)
        });
    }
    let mut body = lb_service("web", &[(80, 30080)]);
    body["spec"]["loadBalancerSourceRanges"] = json!(["192.0.2.0/24"]);
    let uid = cluster.create_service("default", body).await;
    cluster.wait_for_ip("default", "web").await;
    let rule = wait_for("the Service's rule", || async { seen(&cluster, &uid) }).await;
    assert_fired(&cluster.vcd, "lost answers to the firewall writes");
    assert_eq!(
        user_rules(&cluster),
        [foreign.body.name.clone(), rule.rule.name]
    );
    let counts = || {
        cluster.vcd.with_world(|w| {
            (
                firewall_sets(w),
                w.port_profiles
                    .iter()
                    .filter(|p| p.name.starts_with("ingress-fw-"))
                    .count(),
            )
        })
    };
    assert_eq!(
        counts(),
        (2, 1),
        "one source set, one destination set, one profile"
    );
    cluster.delete_service("default", "web").await;
    cluster.wait_for_gone("default", "web").await;
    assert_eq!(user_rules(&cluster), [foreign.body.name]);
    assert_eq!(counts(), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dual_stack_service_is_let_in_on_both_addresses() {
    let cluster = Cluster::start_on(dual_stack::blocks(), fast_config(), |c| {
        c.lb_config.manage_firewall = true;
    })
    .await;
    cluster.add_node("worker-0", "10.0.0.11").await;
    let mut body = lb_service("web", &[(80, 30080)]);
    body["spec"]["ipFamilyPolicy"] = json!("RequireDualStack");
    body["spec"]["ipFamilies"] = json!(["IPv4", "IPv6"]);
    body["spec"]["loadBalancerSourceRanges"] = json!(["192.0.2.0/24"]);
    let uid = cluster.create_service("default", body).await;
    let ingress: Vec<String> = wait_for("both addresses", || async {
        let status = cluster.service("default", "web").await?.status?;
        let ips: Vec<String> = status
            .load_balancer?
            .ingress?
            .into_iter()
            .filter_map(|i| i.ip)
            .collect();
        (ips.len() == 2).then_some(ips)
    })
    .await;
    let rule = wait_for("the Service's firewall rule", || async {
        seen(&cluster, &uid)
    })
    .await;
    let mut destinations = rule.destinations.clone();
    destinations.sort();
    let mut expected = ingress.clone();
    expected.sort();
    assert_eq!(destinations, expected);
    assert_eq!(rule.rule.ip_protocol.as_deref(), Some("IPV4_IPV6"));
}

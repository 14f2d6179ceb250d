//! `manifests/components/monitoring`: the alerts (PrometheusRule `vcd-ccm`),
//! the Grafana dashboard and the series of the alerts' `promtool` cases name
//! only metrics the real `vcd-ccm run` exports, with labels it gives them;
//! `promtool test rules` passes `tests/alerts.yaml`, which has a case where
//! each alert fires and one where it does not; every alert has a severity
//! and a runbook; and the component renders on top of the base.
//!
//! `promtool` comes from Debian's `prometheus` package. Without it on the
//! PATH the `promtool` test fails when `CI` is set, and otherwise is skipped
//! with a line `cargo test` shows (`support::tools`).
//!
//! `cargo test -p vcd-ccm --test it monitoring -- --nocapture` prints how
//! long the binary took to export every series and how long `promtool` ran.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use serde_json::{Value, json};
use vcdsim::{FaultAction, FaultRule};

use crate::support::manifests::documents::{self, Document, find, manifests_dir};
use crate::support::poll::wait_until;
use crate::support::run::World;
use crate::support::run::gateway::{POOLS, VIRTUAL_SERVICES};
use crate::support::tools::{self, PROMTOOL};

/// From spawning the process to its leading.
const LEAD: Duration = Duration::from_secs(30);
/// A Service's load balancer, one failed task and its retry included, and
/// every queried series on `/metrics`.
const CONVERGE: Duration = Duration::from_secs(90);
/// Labels Prometheus gives every series of a PodMonitor's targets.
const TARGET_LABELS: [&str; 5] = ["job", "instance", "namespace", "pod", "container"];
/// The rules file `tests/alerts.yaml` names.
const RULES_FILE: &str = "vcd-ccm.rules.yaml";

fn component_dir() -> PathBuf {
    manifests_dir().join("components/monitoring")
}

fn read_yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: not YAML: {e}", path.display()))
}

/// The PrometheusRule's spec: plain Prometheus rule groups.
fn rule_spec() -> Value {
    read_yaml(&component_dir().join("prometheusrule.yaml"))["spec"].clone()
}

fn rules(spec: &Value) -> Vec<&Value> {
    spec["groups"]
        .as_array()
        .expect("rule groups")
        .iter()
        .flat_map(|group| group["rules"].as_array().expect("a group's rules"))
        .collect()
}

fn text<'v>(value: &'v Value, key: &str) -> &'v str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("no {key} in {value}"))
}

fn dashboard() -> Value {
    let path = component_dir().join("dashboard.json");
    let text = std::fs::read_to_string(&path).expect("dashboard.json is readable");
    serde_json::from_str(&text).expect("dashboard.json is JSON")
}

fn alert_cases() -> Value {
    read_yaml(&component_dir().join("tests/alerts.yaml"))
}

fn cases(tests: &Value) -> impl Iterator<Item = &Value> {
    tests["tests"].as_array().expect("tests").iter()
}

// --- What a PromQL expression refers to. ---

/// The metrics and label names one query uses, and where it is used.
struct Query {
    place: String,
    expr: String,
    /// Label names its templates show (`$labels.x`, a legend's `{{x}}`).
    shown: Vec<String>,
}

#[derive(Debug, Default)]
struct Refs {
    /// Each selector: the metric, and the label names its matchers name.
    selectors: Vec<(String, Vec<String>)>,
    /// The label names of `by`, `without`, `on`, `ignoring`, `group_left`
    /// and `group_right`.
    grouping: Vec<String>,
}

/// Words that are never metric names (functions are, by the `(` after them).
const KEYWORDS: [&str; 21] = [
    "and",
    "or",
    "unless",
    "offset",
    "bool",
    "atan2",
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
    "limitk",
    "inf",
    "nan",
];
const GROUPING: [&str; 6] = [
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// The index after the string literal starting at `at`.
fn skip_string(chars: &[char], at: usize) -> usize {
    let quote = chars[at];
    let mut i = at + 1;
    while i < chars.len() && chars[i] != quote {
        i += if chars[i] == '\\' { 2 } else { 1 };
    }
    i + 1
}

/// The label names of the matchers (or label set) `{…}` starting at `at`,
/// and the index after its `}`.
fn matchers(chars: &[char], at: usize) -> (Vec<String>, usize) {
    let mut labels = Vec::new();
    let mut i = at + 1;
    while i < chars.len() && chars[i] != '}' {
        let c = chars[i];
        if c == '"' || c == '\'' || c == '`' {
            i = skip_string(chars, i);
        } else if is_word(c) {
            let start = i;
            while i < chars.len() && is_word(chars[i]) {
                i += 1;
            }
            let rest = chars[i..].iter().copied().find(|c| !c.is_whitespace());
            if matches!(rest, Some('=' | '!')) {
                labels.push(chars[start..i].iter().collect());
            }
        } else {
            i += 1;
        }
    }
    (labels, i + 1)
}

fn scan(expr: &str) -> Refs {
    let chars: Vec<char> = expr.chars().collect();
    let mut refs = Refs::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' || c == '`' {
            i = skip_string(&chars, i);
        } else if c == '[' {
            // A range or a subquery: durations and Grafana's $__rate_interval.
            while i < chars.len() && chars[i] != ']' {
                i += 1;
            }
            i += 1;
        } else if c == '{' {
            let (labels, end) = matchers(&chars, i);
            refs.selectors.push((String::new(), labels));
            i = end;
        } else if c.is_ascii_digit() || c == '.' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if is_word(c) {
            let start = i;
            while i < chars.len() && is_word(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let mut next = i;
            while next < chars.len() && chars[next].is_whitespace() {
                next += 1;
            }
            let after = chars.get(next).copied();
            if GROUPING.contains(&word.as_str()) {
                if after == Some('(') {
                    let close = next + chars[next..].iter().position(|&c| c == ')').unwrap();
                    let list: String = chars[next + 1..close].iter().collect();
                    refs.grouping.extend(
                        list.split(',')
                            .map(|label| label.trim().to_string())
                            .filter(|label| !label.is_empty()),
                    );
                    i = close + 1;
                }
            } else if after == Some('(') || KEYWORDS.contains(&word.as_str()) {
                // A function, an aggregation or an operator.
            } else if after == Some('{') {
                let (labels, end) = matchers(&chars, next);
                refs.selectors.push((word, labels));
                i = end;
            } else {
                refs.selectors.push((word, Vec::new()));
            }
        } else {
            i += 1;
        }
    }
    refs
}

fn shown_labels(template: &str, pattern: &str) -> Vec<String> {
    regex::Regex::new(pattern)
        .unwrap()
        .captures_iter(template)
        .map(|c| c[1].to_string())
        .collect()
}

/// Every query of the alerts, the dashboard (panels and variables) and the
/// series of the alerts' cases.
fn queries() -> Vec<Query> {
    let mut queries = Vec::new();
    let spec = rule_spec();
    for rule in rules(&spec) {
        let annotations = serde_json::to_string(&rule["annotations"]).unwrap();
        queries.push(Query {
            place: format!("alert {}", text(rule, "alert")),
            expr: text(rule, "expr").to_string(),
            shown: shown_labels(&annotations, r"\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)"),
        });
    }
    let dashboard = dashboard();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            queries.push(Query {
                place: format!("panel {:?}", text(panel, "title")),
                expr: text(target, "expr").to_string(),
                shown: shown_labels(
                    target["legendFormat"].as_str().unwrap_or_default(),
                    r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}",
                ),
            });
        }
    }
    let label_values = regex::Regex::new(r"^label_values\((.*),\s*([a-zA-Z_]\w*)\)$").unwrap();
    for variable in dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
    {
        if variable["type"] != "query" {
            continue;
        }
        let query = text(&variable["query"], "query");
        let parts = label_values
            .captures(query)
            .unwrap_or_else(|| panic!("variable {query}: not label_values(series, label)"));
        queries.push(Query {
            place: format!("variable {}", text(variable, "name")),
            expr: parts[1].to_string(),
            shown: vec![parts[2].to_string()],
        });
    }
    let tests = alert_cases();
    for case in cases(&tests) {
        for series in case["input_series"].as_array().expect("input_series") {
            queries.push(Query {
                place: format!("case {:?}", text(case, "name")),
                expr: text(series, "series").to_string(),
                shown: Vec::new(),
            });
        }
    }
    queries
}

/// Each sample name of a scrape and the label names seen on its samples.
fn exported(body: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut exported = BTreeMap::<String, BTreeSet<String>>::new();
    for line in body
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let end = line.find(['{', ' ']).unwrap_or(line.len());
        let labels = exported.entry(line[..end].to_string()).or_default();
        if line[end..].starts_with('{') {
            let chars: Vec<char> = line[end..].chars().collect();
            labels.extend(matchers(&chars, 0).0);
        }
    }
    exported
}

/// What `query` asks that `exported` lacks.
fn missing(query: &Query, exported: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let refs = scan(&query.expr);
    let mut problems = Vec::new();
    let mut labels: BTreeSet<&str> = TARGET_LABELS.into();
    if refs.selectors.is_empty() {
        problems.push(format!("{}: no metric in {:?}", query.place, query.expr));
    }
    for (metric, matched) in &refs.selectors {
        let Some(has) = exported.get(metric) else {
            problems.push(format!("{}: {metric:?} is not exported", query.place));
            continue;
        };
        labels.extend(has.iter().map(String::as_str));
        for label in matched {
            if !has.contains(label) && !TARGET_LABELS.contains(&label.as_str()) {
                problems.push(format!("{}: {metric} has no label {label}", query.place));
            }
        }
    }
    for label in refs.grouping.iter().chain(&query.shown) {
        if !labels.contains(label.as_str()) {
            problems.push(format!(
                "{}: no series of {:?} has the label {label}",
                query.place, query.expr
            ));
        }
    }
    problems
}

#[test]
fn the_query_scanner_finds_metrics_labels_and_groupings() {
    let refs = scan(
        r#"sum without (operation, outcome) (rate(vcd_requests_total{outcome=~"a|b",operation!="x"}[5m])) / on (pod) group_left max by (le) (x_bucket offset 15m) > 0.1 unless y"#,
    );
    assert_eq!(
        refs.selectors,
        [
            (
                "vcd_requests_total".to_string(),
                vec!["outcome".to_string(), "operation".to_string()]
            ),
            ("x_bucket".to_string(), vec![]),
            ("y".to_string(), vec![]),
        ]
    );
    assert_eq!(refs.grouping, ["operation", "outcome", "pod", "le"]);
    let scraped = exported("# TYPE a counter\na_total{x=\"1,\\\"}\",y=\"\"} 3\nb 1\n# EOF\n");
    assert_eq!(
        scraped,
        BTreeMap::from([
            (
                "a_total".to_string(),
                BTreeSet::from(["x".into(), "y".into()])
            ),
            ("b".to_string(), BTreeSet::new()),
        ])
    );
}

// --- Through the real binary. ---

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_queried_series_is_exported_by_the_binary_with_its_labels() {
    let queries = queries();
    let world = World::start().await;
    world.add_nodes().await;
    // One VCD task that fails (a reconcile error, retried) and one answer
    // 429 (a throttled request, retried), so their series exist too.
    world.vcd.add_fault(
        FaultRule::new(
            Some("POST"),
            POOLS,
            FaultAction::FailTask {
                minor_error_code: "INTERNAL_SERVER_ERROR".into(),
                message: "injected by the test".into(),
            },
        )
        .times(1),
    );
    world.vcd.add_fault(
        FaultRule::new(
            Some("POST"),
            VIRTUAL_SERVICES,
            FaultAction::Error {
                status: 429,
                minor_error_code: "TOO_MANY_REQUESTS".into(),
                message: "injected by the test".into(),
            },
        )
        .times(1),
    );
    let started = Instant::now();
    let ccm = world.spawn("monitored", &[]);
    wait_until("the process to lead", LEAD, || async {
        let status = ccm.master_status().await?;
        match status == 1.0 {
            true => Ok(()),
            false => Err(format!("leader_election_master_status {status}")),
        }
    })
    .await;
    world.create_service("web", &[80]).await;
    wait_until("the Service's address", CONVERGE, || async {
        world.external_ip("web").await
    })
    .await;
    let (body, _) = wait_until("every queried series on /metrics", CONVERGE, || async {
        let (_, body) = ccm.get("/metrics").await?;
        let scraped = exported(&body);
        let problems: Vec<String> = queries.iter().flat_map(|q| missing(q, &scraped)).collect();
        match problems.is_empty() {
            true => Ok(body),
            false => Err(problems.join("\n")),
        }
    })
    .await;
    println!(
        "{} queries: every series exported {:?} after the start",
        queries.len(),
        started.elapsed()
    );
    // The readiness alert's series says what /readyz says.
    ccm.ready().await.expect("ready");
    let readiness: Vec<&str> = body
        .lines()
        .filter(|line| line.starts_with("vcd_ccm_check_passing{probe=\"readyz\""))
        .collect();
    assert!(readiness.len() >= 3, "{readiness:?}");
    assert!(
        readiness.iter().all(|line| line.ends_with(" 1")),
        "{readiness:?}"
    );
}

// --- The rules and their cases. ---

#[test]
fn every_alert_has_a_severity_a_runbook_and_cases_that_fire_and_do_not() {
    let spec = rule_spec();
    let mut names = BTreeSet::new();
    for rule in rules(&spec) {
        let name = text(rule, "alert");
        assert!(names.insert(name.to_string()), "{name} twice");
        let severity = rule["labels"]["severity"].as_str().unwrap_or_default();
        assert!(
            ["critical", "warning", "info"].contains(&severity),
            "{name}: severity {severity:?}"
        );
        for key in ["summary", "description", "runbook"] {
            let annotation = rule["annotations"][key].as_str().unwrap_or_default();
            assert!(!annotation.trim().is_empty(), "{name}: no {key}");
        }
        let runbook = text(&rule["annotations"], "runbook");
        // The test below adds it to the expected annotations as it is.
        assert!(!runbook.contains("{{"), "{name}: a runbook is static text");
        for part in ["Meaning:", "Confirm:", "Do:"] {
            assert!(runbook.contains(part), "{name}: the runbook has no {part}");
        }
    }
    let tests = alert_cases();
    assert_eq!(tests["rule_files"], json!([RULES_FILE]));
    let (mut fires, mut quiet) = (BTreeSet::new(), BTreeSet::new());
    for case in cases(&tests) {
        for check in case["alert_rule_test"].as_array().expect("alert_rule_test") {
            let name = text(check, "alertname").to_string();
            assert!(names.contains(&name), "a case for an unknown alert {name}");
            let expected = check["exp_alerts"].as_array().map_or(0, Vec::len);
            match expected {
                0 => quiet.insert(name),
                _ => fires.insert(name),
            };
        }
    }
    assert_eq!(fires, names, "alerts with a case where they fire");
    assert_eq!(quiet, names, "alerts with a case where they do not");
}

#[test]
fn promtool_passes_the_alert_cases() {
    let Some([promtool]) = tools::require([PROMTOOL]) else {
        return;
    };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let spec = rule_spec();
    std::fs::write(
        dir.path().join(RULES_FILE),
        serde_yaml_ng::to_string(&spec).unwrap(),
    )
    .unwrap();
    let runbooks: BTreeMap<String, Value> = rules(&spec)
        .into_iter()
        .map(|rule| {
            let name = text(rule, "alert").to_string();
            (name, rule["annotations"]["runbook"].clone())
        })
        .collect();
    let mut tests = alert_cases();
    let mut checks = 0;
    for case in tests["tests"].as_array_mut().expect("tests") {
        for check in case["alert_rule_test"].as_array_mut().expect("checks") {
            checks += 1;
            let runbook = runbooks[text(check, "alertname")].clone();
            for alert in check["exp_alerts"].as_array_mut().into_iter().flatten() {
                alert["exp_annotations"]["runbook"] = runbook.clone();
            }
        }
    }
    std::fs::write(
        dir.path().join("alerts.yaml"),
        serde_yaml_ng::to_string(&tests).unwrap(),
    )
    .unwrap();
    let started = Instant::now();
    let output = Command::new(promtool)
        .args(["test", "rules", "alerts.yaml"])
        .current_dir(dir.path())
        .output()
        .expect("promtool runs");
    assert!(
        output.status.success(),
        "promtool test rules:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    println!(
        "promtool test rules: {checks} checks in {} cases, {:?}",
        cases(&tests).count(),
        started.elapsed()
    );
}

// --- The component on top of the base. ---

/// `to` as seen from `from` (kustomize takes no absolute path).
fn relative(from: &Path, to: &Path) -> PathBuf {
    let from = from.canonicalize().expect("a real directory");
    let to = to.canonicalize().expect("a real directory");
    let up = from
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .map(|_| Component::ParentDir);
    let down = to
        .components()
        .filter(|c| matches!(c, Component::Normal(_)));
    up.chain(down).collect()
}

fn one<'d>(documents: &'d [Document], kind: &str, name: &str) -> &'d Document {
    let matching: Vec<&Document> = documents
        .iter()
        .filter(|d| d.kind == kind && d.name == name)
        .collect();
    assert_eq!(matching.len(), 1, "exactly one {kind} {name}");
    matching[0]
}

#[test]
fn the_component_renders_on_the_base_and_scrapes_the_deployments_port_with_its_own_token() {
    let overlay = tempfile::tempdir().expect("a temporary directory");
    let base = relative(overlay.path(), &manifests_dir());
    let base = base.to_str().expect("a UTF-8 path");
    std::fs::write(
        overlay.path().join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - {base}\ncomponents:\n  - {base}/components/monitoring\n"
        ),
    )
    .unwrap();
    let rendered = documents::rendered_at(overlay.path(), "the base with components/monitoring");

    // The PodMonitor scrapes the Deployment's pods on their HTTPS port.
    let deployment: Deployment = find(&rendered, "Deployment", "vcd-ccm");
    let template = deployment.spec.template;
    let pod_labels = template.metadata.unwrap().labels.unwrap_or_default();
    let monitor = &one(&rendered, "PodMonitor", "vcd-ccm").body;
    assert_eq!(monitor["apiVersion"], "monitoring.coreos.com/v1");
    assert_eq!(monitor["metadata"]["namespace"], "kube-system");
    let selector = monitor["spec"]["selector"]["matchLabels"]
        .as_object()
        .expect("matchLabels");
    for (key, value) in selector {
        assert_eq!(
            pod_labels.get(key).map(String::as_str),
            value.as_str(),
            "{key}"
        );
    }
    let endpoints = monitor["spec"]["podMetricsEndpoints"]
        .as_array()
        .expect("endpoints");
    let [endpoint] = &endpoints[..] else {
        panic!("one endpoint: {endpoints:?}")
    };
    assert_eq!(
        (&endpoint["path"], &endpoint["scheme"]),
        (&json!("/metrics"), &json!("https"))
    );
    let container = &template.spec.unwrap().containers[0];
    let port = container
        .ports
        .iter()
        .flatten()
        .find(|p| p.name.as_deref() == endpoint["port"].as_str())
        .expect("the endpoint's port is a named port of the container");
    assert_eq!(port.container_port, 10258);

    // Its token: a ServiceAccount's, bound to the role that may get /metrics.
    let credentials = &endpoint["authorization"]["credentials"];
    assert_eq!(endpoint["authorization"]["type"], "Bearer");
    let secret: Secret = find(&rendered, "Secret", text(credentials, "name"));
    assert_eq!(
        secret.type_.as_deref(),
        Some("kubernetes.io/service-account-token")
    );
    assert_eq!(text(credentials, "key"), "token");
    let account =
        secret.metadata.annotations.unwrap_or_default()["kubernetes.io/service-account.name"]
            .clone();
    let _: ServiceAccount = find(&rendered, "ServiceAccount", &account);
    let binding: ClusterRoleBinding = find(&rendered, "ClusterRoleBinding", &account);
    let subjects = binding.subjects.unwrap_or_default();
    assert!(
        subjects
            .iter()
            .any(|s| s.kind == "ServiceAccount" && s.name == account),
        "{subjects:?}"
    );
    let role: ClusterRole = find(&rendered, "ClusterRole", &binding.role_ref.name);
    let rules = role.rules.unwrap_or_default();
    assert!(
        rules.iter().any(|rule| {
            rule.non_resource_urls
                .iter()
                .flatten()
                .any(|url| url == "/metrics")
                && rule.verbs.iter().any(|verb| verb == "get")
        }),
        "{rules:?}"
    );

    // The rules as written, and the dashboard for Grafana's sidecar.
    let rule = &one(&rendered, "PrometheusRule", "vcd-ccm").body;
    assert_eq!(rule["spec"], rule_spec());
    let dashboard_map: ConfigMap = find(&rendered, "ConfigMap", "vcd-ccm-dashboard");
    let labels = dashboard_map.metadata.labels.unwrap_or_default();
    assert_eq!(
        labels.get("grafana_dashboard").map(String::as_str),
        Some("1")
    );
    let data = dashboard_map.data.unwrap_or_default();
    let shipped: Value = serde_json::from_str(&data["dashboard.json"]).expect("JSON");
    assert_eq!(shipped, dashboard());
    for panel in shipped["panels"].as_array().expect("panels") {
        if panel["type"] == "row" {
            continue;
        }
        let title = text(panel, "title");
        assert_eq!(panel["datasource"]["uid"], "${datasource}", "{title}");
        let targets = panel["targets"].as_array().map_or(0, Vec::len);
        assert!(targets > 0, "{title}: no query");
    }
}

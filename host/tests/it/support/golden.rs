//! Recorded request logs: what the CCM wrote to VCD and Kubernetes in a
//! scenario, normalised (ids, hashes, times and key material replaced) and
//! compared with a file under `host/tests/golden/`, so a change of the code's
//! shape that changes its behaviour fails. `VCD_CCM_BLESS=1` rewrites the
//! files (never under CI); a reviewer reads the diff.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use regex::Regex;
use serde_json::{Map, Value};

/// How a log is compared. Serial: volatile tokens numbered by first
/// appearance, the order part of the behaviour. Concurrent (Services and
/// Nodes reconciled side by side, so the order and the intermediate bodies
/// follow the scheduler): tokens all alike, and the last body written to
/// each object, sorted by object (what the writes left in VCD).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Serial,
    Concurrent,
}

/// Replaces uuids, 8-hex-digit name hashes, timestamps and PEM blocks.
pub struct Normaliser {
    order: Order,
    seen: HashMap<String, String>,
    uuid: Regex,
    hash: Regex,
    digest: Regex,
    time: Regex,
    external: Regex,
}

impl Normaliser {
    pub fn new(order: Order) -> Self {
        Self {
            order,
            seen: HashMap::new(),
            uuid: Regex::new(
                r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
            )
            .expect("a regex"),
            hash: Regex::new(r"\b[0-9a-f]{8}\b").expect("a regex"),
            // Certificate digests (the demo's Secret is made at start).
            digest: Regex::new(r"[0-9a-f]{12,64}").expect("a regex"),
            time: Regex::new(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?")
                .expect("a regex"),
            external: Regex::new(
                r"(?:203\.0\.113|192\.0\.2)\.[1-9]\d*|2001:db8:[0-9a-f:]*[0-9a-f]",
            )
            .expect("a regex"),
        }
    }

    fn token(&mut self, kind: &str, found: &str) -> String {
        if self.order == Order::Concurrent {
            return format!("<{kind}>");
        }
        let next = self.seen.len() + 1;
        self.seen
            .entry(found.to_string())
            .or_insert_with(|| format!("<{kind}{next}>"))
            .clone()
    }

    pub fn text(&mut self, text: &str) -> String {
        if text.contains("-----BEGIN") {
            return "<pem>".to_string();
        }
        let text = self.time.replace_all(text, "<time>").into_owned();
        // Addresses are picked from the ranges by a hash of the Service uid.
        let text = replace_with(&self.external.clone(), &text, |m| self.token("vip", m));
        let text = replace_with(&self.uuid.clone(), &text, |m| self.token("id", m));
        let text = replace_with(&self.digest.clone(), &text, |m| self.token("digest", m));
        replace_with(&self.hash.clone(), &text, |m| self.token("hash", m))
    }

    /// The value with every string normalised and the named keys dropped.
    pub fn value(&mut self, value: &Value, dropped: &[&str]) -> Value {
        match value {
            Value::String(text) => Value::String(self.text(text)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.value(v, dropped)).collect())
            }
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .filter(|(key, _)| !dropped.contains(&key.as_str()))
                    .map(|(key, v)| (key.clone(), self.value(v, dropped)))
                    .collect::<Map<_, _>>(),
            ),
            other => other.clone(),
        }
    }
}

fn replace_with(pattern: &Regex, text: &str, mut with: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for found in pattern.find_iter(text) {
        out.push_str(&text[last..found.start()]);
        out.push_str(&with(found.as_str()));
        last = found.end();
    }
    out.push_str(&text[last..]);
    out
}

/// VCD writes as `METHOD path status` lines, each followed by its body
/// (serial), or the last body written to each object (concurrent).
pub fn vcd_writes(entries: &[vcdsim::LogEntry], normaliser: &mut Normaliser) -> Vec<String> {
    let writes = entries.iter().filter(|e| {
        e.method != "GET" && !e.path.contains("/sessions") && !e.path.contains("/oauth/")
    });
    if normaliser.order == Order::Serial {
        return writes
            .map(|e| {
                let path = normaliser.text(&e.path);
                let body = normaliser.value(&e.request_body, &[]);
                format!("{} {path} {}\n  {body}", e.method, e.status)
            })
            .collect();
    }
    let mut left: BTreeMap<String, Value> = BTreeMap::new();
    let mut names_by_path: HashMap<String, String> = HashMap::new();
    for entry in writes.filter(|e| e.status < 300) {
        let object = entry.template.trim_end_matches("/{id}");
        let name = entry
            .request_body
            .get("name")
            .or_else(|| entry.request_body.get("alias"))
            .and_then(Value::as_str)
            .map(|name| normaliser.text(name))
            .or_else(|| names_by_path.get(&entry.path).cloned())
            .unwrap_or_else(|| normaliser.text(&entry.path));
        let key = format!("{} {name}", normaliser.text(object));
        names_by_path.insert(entry.path.clone(), name);
        if entry.method == "DELETE" {
            left.remove(&key);
        } else {
            let mut body = normaliser.value(&entry.request_body, &["id"]);
            if let Some(Value::Array(rules)) = body.get_mut("userDefinedRules") {
                rules.sort_by_key(|rule| rule["name"].to_string());
            }
            left.insert(key, body);
        }
    }
    left.into_iter()
        .map(|(key, body)| format!("{key}\n  {body}"))
        .collect()
}

/// Fields of a Kubernetes write that differ between identical runs.
const KUBE_VOLATILE: &[&str] = &[
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "managedFields",
    "eventTime",
    "firstTimestamp",
    "lastTimestamp",
    "reportingInstance",
    "name",
];

/// Kubernetes writes (leases aside: they follow the clock) as
/// `METHOD path status` lines, each followed by its body, grouped by the
/// object written (an Event by the object it is about) in the order of the
/// groups' names: the test's own actions and the controller's race only
/// across objects. Object names in bodies are dropped (Events are named by
/// time); paths keep them. A write repeating the one before it to the same
/// object (not an Event) counts once: whether a second sync (after the controller's own
/// annotation write) lands before or after the informer saw the first
/// write's result follows the scheduler.
pub fn kube_writes(records: &[kubesim::RequestRecord], normaliser: &mut Normaliser) -> Vec<String> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // In the demo, whether a Service is seen before the Nodes are
    // initialised follows the scheduler, and with it these Events.
    let concurrent = normaliser.order == Order::Concurrent;
    let timing = |r: &kubesim::RequestRecord| {
        let reason = r.body["reason"].as_str().unwrap_or_default();
        concurrent && ["UnAvailableLoadBalancer", "UpdatedLoadBalancer"].contains(&reason)
    };
    // A count bump names only its Event; it joins the group of the object
    // the Event is about, so bumps of different Services do not interleave.
    let mut about_of: HashMap<String, String> = HashMap::new();
    for record in records
        .iter()
        .filter(|r| r.method != "GET" && !r.path.contains("/leases") && !timing(r))
    {
        let event = record.path.contains("/events");
        let (object, path) = match record.path.rsplit_once("/events") {
            Some((namespace, event_name)) => {
                let about = &record.body["involvedObject"];
                let object = format!(
                    "{namespace}/events about {}/{}",
                    about["kind"].as_str().unwrap_or_default(),
                    about["name"].as_str().unwrap_or_default()
                );
                let object = match record.body["metadata"]["name"].as_str() {
                    Some(name) => {
                        about_of.insert(name.to_string(), object.clone());
                        object
                    }
                    None => about_of
                        .get(event_name.trim_start_matches('/'))
                        .cloned()
                        .unwrap_or(object),
                };
                (object, format!("{namespace}/events"))
            }
            None => (
                record.path.trim_end_matches("/status").to_string(),
                record.path.clone(),
            ),
        };
        let body = normaliser.value(&record.body, KUBE_VOLATILE);
        let line = format!(
            "{} {} {}\n  {body}",
            record.method,
            normaliser.text(&path),
            record.status
        );
        let group = groups.entry(normaliser.text(&object)).or_default();
        if event || group.last() != Some(&line) {
            group.push(line);
        }
    }
    groups.into_values().flatten().collect()
}

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"))
}

/// Compares the lines with the recorded file, or rewrites it when
/// `VCD_CCM_BLESS=1` (refused under CI, where a missing file fails).
pub fn assert_matches(name: &str, lines: &[String]) {
    let path = golden_path(name);
    let actual = lines.join("\n") + "\n";
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !ci && std::env::var("VCD_CCM_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("the golden directory");
        std::fs::write(&path, &actual).expect("the golden file is written");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (VCD_CCM_BLESS=1 records it)", path.display()));
    if expected != actual {
        let now = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("golden/{name}.txt"));
        std::fs::create_dir_all(now.parent().expect("a parent")).expect("a directory");
        std::fs::write(&now, &actual).expect("the new log is written");
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        let context = |text: &str| {
            text.lines()
                .skip(first.saturating_sub(2))
                .take(6)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{name}: the requests differ from {} at line {} ({} lines recorded, {} now, written to {})\nrecorded:\n{}\nnow:\n{}",
            path.display(),
            first + 1,
            expected.lines().count(),
            actual.lines().count(),
            now.display(),
            context(&expected),
            context(&actual),
        );
    }
}

//! The spec as each later API version defines it: the 37.2 file plus what
//! VMware's published reference for 38.x and 39.x adds to its definitions,
//! and the operations those versions add without a schema in the file.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use super::{Spec, collect_patterns};

/// Properties later API versions add to the 37.2 definitions, or whose
/// schema they change, as VMware's published reference for those versions
/// lists them: (first version, definition, property, schema). vcdsim's
/// handlers refuse them below that version
/// (`api/alb_virtual_service_versions.rs`, `api/alb_pool_monitors.rs`).
/// From 39.0 a virtual service's read-only `status` is an object, as
/// vcdsim models it, and a health monitor (the item of a pool's
/// `healthMonitors`, and the body of the monitor operations) has an id,
/// check counts and per-type settings.
const ADDED_AFTER_37_2: &[(&str, &str, &str, &str)] = &[
    (
        "38.0",
        "EdgeLoadBalancerVirtualService",
        "nonCriticalLoggingEnabled",
        r#"{"type": "boolean"}"#,
    ),
    (
        "39.0",
        "EdgeLoadBalancerVirtualService",
        "status",
        r#"{"type": "object", "properties": {"realizationStatus": {"type": "string"}}}"#,
    ),
    ("39.0", MONITOR, "id", STRING),
    ("39.0", MONITOR, "description", STRING),
    ("39.0", MONITOR, "successfulChecksCount", INT32),
    ("39.0", MONITOR, "failedChecksCount", INT32),
    ("39.0", MONITOR, "sendInterval", INT32),
    ("39.0", MONITOR, "receiveTimeout", INT32),
    ("39.0", MONITOR, "httpSettings", MONITOR_HTTP_SETTINGS),
    ("39.0", MONITOR, "httpsSettings", MONITOR_HTTP_SETTINGS),
    ("39.0", MONITOR, "tcpSettings", MONITOR_L4_SETTINGS),
    ("39.0", MONITOR, "udpSettings", MONITOR_L4_SETTINGS),
];

const MONITOR: &str = "EdgeLoadBalancerHealthMonitor";
const STRING: &str = r#"{"type": "string"}"#;
const INT32: &str = r#"{"type": "integer", "format": "int32"}"#;

/// `EdgeLoadBalancerHealthMonitorHttpSettings`, and `…HttpsSettings` (an
/// allOf of it), with `authSettings`
/// (`EdgeLoadBalancerHealthMonitorAuthenticationSettings`), as the 39.1
/// reference states their constraints (the 39.0 pages show none).
const MONITOR_HTTP_SETTINGS: &str = r#"{"type": "object", "properties": {
    "port": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535},
    "requestHeader": {"type": "string", "maxLength": 10240},
    "requestBody": {"type": "string", "maxLength": 10240},
    "useExactRequest": {"type": "boolean"},
    "expectedResponseData": {"type": "string", "maxLength": 2048},
    "expectedResponseCodes": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 6},
    "authSettings": {"type": "object", "required": ["type"], "properties": {
        "type": {"type": "string", "pattern": "^(?!\\s+$).+", "minLength": 4, "maxLength": 5},
        "username": {"type": "string", "pattern": "^(?!\\s+$).+", "minLength": 1, "maxLength": 1024},
        "password": {"type": "string", "pattern": "^(?!\\s+$).+", "minLength": 1, "maxLength": 1024}}}}}"#;

/// `EdgeLoadBalancerHealthMonitorTcpSettings` and `…UdpSettings`, both an
/// allOf of `EdgeLoadBalancerHealthMonitorL4CommonSettings`.
const MONITOR_L4_SETTINGS: &str = r#"{"type": "object", "properties": {
    "port": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535},
    "requestData": {"type": "string", "maxLength": 10240},
    "expectedResponseData": {"type": "string", "maxLength": 2048}}}"#;

/// Operations later API versions add whose schemas the 37.2 spec file
/// does not carry: (first version, `METHOD template`). vcdsim's handlers
/// check their bodies field by field (unknown fields, enums, combinations;
/// `world/http_policy.rs`, `world/health_monitor_checks.rs`), so a body
/// they took is one VCD would take.
pub const UNPUBLISHED_AFTER_37_2: &[(&str, &str)] = &[
    (
        "38.0",
        "PUT /cloudapi/1.0.0/loadBalancer/virtualServices/{id}/httpPolicy/{kind}",
    ),
    ("39.0", "POST /cloudapi/1.0.0/loadBalancer/healthMonitors"),
    (
        "39.0",
        "PUT /cloudapi/1.0.0/loadBalancer/healthMonitors/{id}",
    ),
    (
        "39.0",
        "POST /cloudapi/1.0.0/loadBalancer/healthMonitors/assignments",
    ),
];

/// `major.minor` as numbers, so `38.10` sorts after `38.9`.
fn version_key(version: &str) -> (u32, u32) {
    let (major, minor) = version.split_once('.').unwrap_or((version, "0"));
    (major.parse().unwrap_or(0), minor.parse().unwrap_or(0))
}

impl Spec {
    /// [`Spec::embedded`] as API `version` defines it, built once per set
    /// of additions.
    pub fn embedded_at(version: &str) -> &'static Spec {
        static AT: OnceLock<Mutex<HashMap<u64, &'static Spec>>> = OnceLock::new();
        let additions = Self::additions(version);
        if additions == 0 {
            return Self::embedded();
        }
        let mut built = AT
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        built
            .entry(additions)
            .or_insert_with(|| Box::leak(Box::new(Self::embedded().at_version(version))))
    }

    /// Which of [`ADDED_AFTER_37_2`] API `version` has, as bits.
    fn additions(version: &str) -> u64 {
        ADDED_AFTER_37_2
            .iter()
            .enumerate()
            .filter(|(_, (since, ..))| version_key(version) >= version_key(since))
            .fold(0, |bits, (i, _)| bits | 1 << i)
    }

    /// The spec as API `version` defines it: the 37.2 file plus the
    /// properties versions up to `version` add ([`ADDED_AFTER_37_2`]).
    pub fn at_version(&self, version: &str) -> Spec {
        let mut spec = self.clone();
        for (since, definition, property, schema) in ADDED_AFTER_37_2 {
            if version_key(version) < version_key(since) {
                continue;
            }
            let schema: Value = serde_json::from_str(schema).expect("a schema in JSON");
            let Some(found) = spec.definitions.get_mut(*definition) else {
                continue;
            };
            match found.get_mut("allOf").and_then(Value::as_array_mut) {
                Some(parts) => parts.push(json!({"properties": {*property: schema}})),
                None => {
                    if let Some(properties) = found["properties"].as_object_mut() {
                        properties.insert((*property).to_string(), schema);
                    }
                }
            }
        }
        let mut patterns = (*spec.patterns).clone();
        for definition in spec.definitions.values() {
            collect_patterns(definition, &mut patterns);
        }
        spec.patterns = Arc::new(patterns);
        spec
    }
}

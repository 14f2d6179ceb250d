//! Every write body vcdsim reads agrees with the 37.2 spec field for field:
//! a maximal body (every property the spec defines for the operation,
//! nested objects included) parses, and a property the spec does not
//! define is refused wherever it appears. Skipped without the spec file.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::gateways::LoadBalancerUpdate;
use super::ip_allocations::{AllocateRequest, AllocationUpdate};
use crate::openapi::tests::{request_example, spec};
use crate::world::alb::{Pool, VirtualService};
use crate::world::firewall::{FirewallGroupBody, FirewallRuleBody, FirewallRulesBody};
use crate::world::library::{CertificateItem, DefinedEntity};
use crate::world::nat::{AppPortProfile, NatRuleBody};

/// Parses `body` as `T`, as a handler does.
fn parse<T: DeserializeOwned>(body: &Value) -> Result<(), String> {
    super::parse_body::<T>(body.to_string().as_bytes())
        .map(drop)
        .map_err(|e| e.message)
}

type Parser = fn(&Value) -> Result<(), String>;

/// The write routes and the body type each one reads.
const WRITES: &[(&str, &str, Parser)] = &[
    ("POST", "/loadBalancer/pools", parse::<Pool>),
    ("PUT", "/loadBalancer/pools/{id}", parse::<Pool>),
    (
        "POST",
        "/loadBalancer/virtualServices",
        parse::<VirtualService>,
    ),
    (
        "PUT",
        "/loadBalancer/virtualServices/{id}",
        parse::<VirtualService>,
    ),
    ("POST", "/edgeGateways/{id}/nat/rules", parse::<NatRuleBody>),
    (
        "PUT",
        "/edgeGateways/{id}/nat/rules/{rule}",
        parse::<NatRuleBody>,
    ),
    ("POST", "/applicationPortProfiles", parse::<AppPortProfile>),
    (
        "PUT",
        "/applicationPortProfiles/{id}",
        parse::<AppPortProfile>,
    ),
    ("POST", "/ssl/certificateLibrary", parse::<CertificateItem>),
    (
        "PUT",
        "/ssl/certificateLibrary/{id}",
        parse::<CertificateItem>,
    ),
    ("PUT", "/entities/{id}", parse::<DefinedEntity>),
    ("POST", "/entityTypes/{id}", parse::<DefinedEntity>),
    (
        "PUT",
        "/edgeGateways/{id}/firewall/rules",
        parse::<FirewallRulesBody>,
    ),
    (
        "PUT",
        "/edgeGateways/{id}/firewall/rules/{rule}",
        parse::<FirewallRuleBody>,
    ),
    ("POST", "/firewallGroups", parse::<FirewallGroupBody>),
    ("PUT", "/firewallGroups/{id}", parse::<FirewallGroupBody>),
    ("POST", "/ipSpaces/{id}/allocate", parse::<AllocateRequest>),
    (
        "PUT",
        "/ipSpaces/{id}/allocations/{allocation}",
        parse::<AllocationUpdate>,
    ),
    (
        "PUT",
        "/edgeGateways/{id}/loadBalancer",
        parse::<LoadBalancerUpdate>,
    ),
];

/// JSON pointers of every object in `value` outside free-form `entity`.
fn objects(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            out.push(at.clone());
            for (key, item) in map.iter().filter(|(key, _)| *key != "entity") {
                objects(item, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                objects(item, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_write_body_agrees_with_the_spec_field_for_field() {
    let Some(spec) = spec() else {
        return;
    };
    for (method, path, parse) in WRITES {
        let route = format!("/cloudapi/1.0.0{path}");
        let example = request_example(&spec, method, &route)
            .unwrap_or_else(|| panic!("{method} {route}: the spec takes no body there"));
        parse(&example).unwrap_or_else(|e| panic!("{method} {route}: {e}\n{example:#}"));
        let mut pointers = Vec::new();
        objects(&example, String::new(), &mut pointers);
        for pointer in pointers {
            let mut extra = example.clone();
            extra
                .pointer_mut(&pointer)
                .and_then(Value::as_object_mut)
                .expect("an object")
                .insert("bogusProperty".into(), Value::Bool(true));
            let error = parse(&extra).expect_err(&format!("{method} {route} at {pointer:?}"));
            assert!(
                error.contains("Unrecognized field \"bogusProperty\" (class "),
                "{method} {route} at {pointer:?}: {error}"
            );
        }
    }
}

//! The validator's own tests, and what other tests need from the spec: the
//! spec itself (when present) and maximal example bodies.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::{Spec, segments};

/// The spec, or `None` (the checks are skipped) when it is absent.
pub(crate) fn spec() -> Option<Spec> {
    let path = Spec::default_path();
    if !path.exists() {
        eprintln!("SKIPPED: the CloudAPI spec is absent at {}", path.display());
        return None;
    }
    Some(Spec::load(&path).unwrap_or_else(|e| panic!("{e}")))
}

/// The body of `method template` with every property the spec defines
/// set to a value of its type (an enum's first value), nested objects
/// filled the same way: what a maximal client may send.
pub(crate) fn request_example(spec: &Spec, method: &str, template: &str) -> Option<Value> {
    let wanted = segments(template.strip_prefix(&spec.base_path)?);
    let operation = spec
        .operations
        .iter()
        .find(|o| o.method == method && o.segments == wanted)?;
    Some(example_of(spec, &operation.body.as_ref()?.0, 0))
}

fn example_of(spec: &Spec, schema: &Value, depth: usize) -> Value {
    let schema = spec.resolve(schema);
    if let Some(first) = schema.pointer("/enum/0") {
        return first.clone();
    }
    if Spec::is_any(schema) || depth > 8 {
        return json!({});
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => json!("x"),
        Some("boolean") => json!(true),
        Some("integer" | "number") => schema.get("minimum").cloned().unwrap_or(json!(1)),
        Some("array") => json!([example_of(spec, &schema["items"], depth + 1)]),
        _ => {
            let (mut properties, mut required) = (BTreeMap::new(), BTreeSet::new());
            spec.shape(schema, &mut properties, &mut required);
            properties
                .iter()
                .map(|(name, property)| (name.clone(), example_of(spec, property, depth + 1)))
                .collect::<serde_json::Map<_, _>>()
                .into()
        }
    }
}

#[test]
fn the_validator_catches_what_it_should() {
    let Some(spec) = spec() else {
        return;
    };
    let mut errors = Vec::new();
    spec.check(
        "EntityReference",
        &json!({"name": "a", "id": "b"}),
        "ok",
        &mut errors,
    );
    assert!(errors.is_empty(), "{errors:?}");
    spec.check(
        "EntityReference",
        &json!({"name": 1, "bogus": true}),
        "bad",
        &mut errors,
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    errors.clear();
    spec.check("Error", &json!({"message": "m"}), "missing", &mut errors);
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors.clear();
    spec.check(
        "GatewayUsedIpAddress",
        &json!({"category": "NOPE"}),
        "enum",
        &mut errors,
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
}

#[test]
fn request_bodies_are_checked_against_their_operation() {
    let Some(spec) = spec() else {
        return;
    };
    let pool = json!({"name": "p", "gatewayRef": {"id": "g"}, "healthMonitors": [{"type": "TCP"}]});
    let route = "/cloudapi/1.0.0/loadBalancer/pools/{id}";
    assert_eq!(spec.check_request("PUT", route, &pool), Ok(()));
    assert_eq!(
        spec.check_request("post", "/cloudapi/1.0.0/loadBalancer/pools", &pool),
        Ok(())
    );

    let mut bad = pool.clone();
    bad["healthMonitors"][0]["monitorPort"] = json!(32000);
    bad["algorithm"] = json!(7);
    bad["members"] = json!([{"port": 80}]);
    let errors = spec.check_request("PUT", route, &bad).unwrap_err();
    let expected = [
        "$.algorithm: expected a string, got 7",
        "$.healthMonitors[0].monitorPort: property monitorPort is not defined by EdgeLoadBalancerHealthMonitor",
        "$.members[0]: required property ipAddress is missing",
    ];
    assert_eq!(errors.len(), expected.len(), "{errors:#?}");
    for needle in expected {
        assert!(
            errors.iter().any(|e| e.ends_with(needle)),
            "{needle}: {errors:#?}"
        );
    }

    let rule = json!({"userDefinedRules": [{"name": "r", "direction": "SIDEWAYS"}]});
    let errors = spec
        .check_request(
            "PUT",
            "/cloudapi/1.0.0/edgeGateways/{id}/firewall/rules",
            &rule,
        )
        .unwrap_err();
    assert!(
        errors[0].contains("$.userDefinedRules[0].direction"),
        "{errors:?}"
    );

    for (method, route) in [
        ("PATCH", "/cloudapi/1.0.0/loadBalancer/pools/{id}"),
        ("DELETE", "/cloudapi/1.0.0/loadBalancer/pools/{id}"),
        ("POST", "/api/sessions"),
    ] {
        let errors = spec.check_request(method, route, &pool).unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
    }
    let missing = spec.check_request("PUT", route, &serde_json::Value::Null);
    assert!(missing.unwrap_err()[0].contains("missing"));
}

//! The validator's own tests, and what other tests need from the spec: the
//! spec itself (when present) and maximal example bodies.

use serde_json::{Value, json};

use super::{Spec, Violation, segments};

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
            let (mut properties, mut required) = (Vec::new(), Vec::new());
            spec.shape(schema, &mut properties, &mut required);
            properties
                .iter()
                .map(|(name, property)| (name.to_string(), example_of(spec, property, depth + 1)))
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
        "$.algorithm: expected a string, got 7 (type)",
        "$.healthMonitors[0].monitorPort: property monitorPort is not defined by EdgeLoadBalancerHealthMonitor",
        "$.members[0].ipAddress: required property missing (required)",
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

/// A small spec stating every constraint keyword the validator reads.
fn synthetic() -> Spec {
    let document = json!({
        "basePath": "/cloudapi",
        "paths": {"/1.0.0/things/{id}": {"put": {"parameters": [
            {"in": "body", "required": true, "schema": {"$ref": "#/definitions/Thing"}}
        ]}}},
        "definitions": {"Thing": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 5},
            "code": {"type": "string", "pattern": "^[a-z]+$"},
            "tags": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
            "ratio": {"type": "integer", "minimum": 1, "maximum": 20},
            "share": {"type": "number", "minimum": 0, "exclusiveMinimum": true,
                      "maximum": 1, "exclusiveMaximum": true},
            "kind": {"type": "string", "enum": ["A", "B"]},
        }}},
    });
    Spec::from_document(&document).expect("a spec")
}

#[test]
fn every_constraint_keyword_is_checked_and_named() {
    let spec = synthetic();
    let route = "/cloudapi/1.0.0/things/{id}";
    let good =
        json!({"name": "ab", "code": "abc", "tags": ["t"], "ratio": 1, "share": 0.5, "kind": "A"});
    assert_eq!(spec.check_request("PUT", route, &good), Ok(()));
    let cases = [
        (
            json!({"name": "abcdef"}),
            "$.name: 6 characters, maxLength 5",
        ),
        (json!({"name": ""}), "$.name: 0 characters, minLength 1"),
        (
            json!({"name": "a", "code": "a b"}),
            "$.code: \"a b\" does not match pattern ^[a-z]+$ (pattern)",
        ),
        (
            json!({"name": "a", "tags": []}),
            "$.tags: 0 items, minItems 1",
        ),
        (
            json!({"name": "a", "tags": ["a", "b", "c"]}),
            "$.tags: 3 items, maxItems 2",
        ),
        (
            json!({"name": "a", "ratio": 0}),
            "$.ratio: 0 is below minimum 1",
        ),
        (
            json!({"name": "a", "ratio": 21}),
            "$.ratio: 21 is above maximum 20",
        ),
        (
            json!({"name": "a", "share": 0}),
            "$.share: 0 is not below minimum 0 (exclusiveMinimum)",
        ),
        (
            json!({"name": "a", "share": 1}),
            "$.share: 1 is not above maximum 1 (exclusiveMaximum)",
        ),
        (
            json!({"name": "a", "kind": "FOO"}),
            "$.kind: \"FOO\" is not one of [\"A\",\"B\"] (enum)",
        ),
        (
            json!({"code": "a"}),
            "$.name: required property missing (required)",
        ),
        (
            json!({"name": 7}),
            "$.name: expected a string, got 7 (type)",
        ),
    ];
    for (body, wanted) in cases {
        let errors = spec.check_request("PUT", route, &body).unwrap_err();
        assert_eq!(errors, [format!("PUT {route}: {wanted}")], "{body}");
    }
}

#[test]
fn each_generated_violation_breaks_exactly_its_constraint() {
    let spec = synthetic();
    let route = "/cloudapi/1.0.0/things/{id}";
    let good =
        json!({"name": "ab", "code": "abc", "tags": ["t"], "ratio": 1, "share": 0.5, "kind": "A"});
    let violations = Violation::all_of(&spec, "PUT", route, &good);
    let kinds: Vec<_> = violations.iter().map(|v| v.kind.keyword()).collect();
    for kind in [
        "required",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "minimum",
        "maximum",
        "enum",
    ] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    for violation in &violations {
        let errors = spec
            .check_request("PUT", route, &violation.body)
            .unwrap_err();
        assert_eq!(
            errors,
            [format!("PUT {route}: {}", violation.expected)],
            "{violation:?}"
        );
        assert!(
            violation.expected.starts_with(&violation.path),
            "{violation:?}"
        );
    }
}

#[test]
fn the_embedded_extract_judges_routed_bodies_as_the_full_spec_does() {
    let Some(full) = spec() else {
        return;
    };
    let embedded = Spec::embedded();
    for (method, template) in super::extract::ROUTED {
        let example = request_example(&full, method, template).expect("an example body");
        assert_eq!(
            request_example(embedded, method, template).as_ref(),
            Some(&example),
            "{method} {template}"
        );
        for violation in Violation::all_of(&full, method, template, &example) {
            let errors = full.check_request(method, template, &violation.body);
            assert_eq!(
                embedded.check_request(method, template, &violation.body),
                errors,
                "{method} {template}"
            );
            assert_eq!(
                errors,
                Err(vec![format!("{method} {template}: {}", violation.expected)]),
                "{method} {template} {}",
                violation.path
            );
        }
    }
}

#[test]
fn checking_a_pool_is_linear_and_cheap() {
    let spec = Spec::embedded_at("37.2");
    let route = "/cloudapi/1.0.0/loadBalancer/pools/{id}";
    for count in [100, 5000] {
        let members: Vec<Value> = (0..count)
            .map(|i| json!({"ipAddress": format!("10.0.{}.{}", i / 250, i % 250), "port": 30080, "ratio": 1, "enabled": true}))
            .collect();
        let pool = json!({"name": "p", "gatewayRef": {"id": "g"}, "members": members,
                          "healthMonitors": [{"type": "TCP"}], "algorithm": "ROUND_ROBIN"});
        let rounds = 20;
        let start = std::time::Instant::now();
        for _ in 0..rounds {
            let errors = spec
                .constraint_errors("PUT", route, &pool)
                .expect("an operation");
            assert_eq!(errors.len(), usize::from(count > 100), "{errors:?}");
        }
        eprintln!(
            "constraint check of a pool with {count} members: {:?} each",
            start.elapsed() / rounds
        );
    }
}

//! Wire truth: every request body a test sent vcdsim, checked strictly
//! (unknown property = failure) against the CloudAPI spec of the API
//! version it was sent under (the 37.2 file plus what later versions add);
//! the operations later versions add without a published schema are left
//! to vcdsim's handlers, which check them field by field.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use vcdsim::Sim;
use vcdsim::openapi::{Spec, UNPUBLISHED_AFTER_37_2, Violation};

fn spec() -> Option<&'static Spec> {
    static SPEC: OnceLock<Option<Spec>> = OnceLock::new();
    SPEC.get_or_init(|| {
        let path = Spec::default_path();
        if !path.exists() {
            eprintln!(
                "wire truth: SKIPPED, the CloudAPI spec is absent at {} (set VCDSIM_OPENAPI)",
                path.display()
            );
            return None;
        }
        Some(Spec::load(&path).unwrap_or_else(|e| panic!("{e}")))
    })
    .as_ref()
}

/// The spec violations of every CloudAPI request body `sim` has logged.
pub fn violations(sim: &Sim) -> Vec<String> {
    let Some(spec) = spec() else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    let mut by_version = BTreeMap::new();
    for entry in sim.requests() {
        if !entry.template.starts_with("/cloudapi/") || entry.request_body.is_null() {
            continue;
        }
        // No published schema to check against: vcdsim's handler checked it.
        let operation = format!("{} {}", entry.method, entry.template);
        if UNPUBLISHED_AFTER_37_2
            .iter()
            .any(|(since, op)| *op == operation && entry.api_version.as_str() >= *since)
        {
            continue;
        }
        let spec = by_version
            .entry(entry.api_version.clone())
            .or_insert_with(|| spec.at_version(&entry.api_version));
        if let Err(found) = spec.check_request(&entry.method, &entry.template, &entry.request_body)
        {
            errors.extend(found);
        }
    }
    errors.sort();
    errors.dedup();
    errors
}

/// Panics listing every request body that is not what the spec defines.
pub fn assert_requests_follow_the_spec(sim: &Sim) {
    let errors = violations(sim);
    assert!(
        errors.is_empty(),
        "{} request bodies the CloudAPI spec of their API version does not define:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

/// Replays every kind of CloudAPI body the CCM sent `sim` with each
/// constraint the spec states on it broken, one at a time (vcdsim's
/// generator: maxItems, minimum, enum, required, …), and asserts vcdsim
/// refuses each with a 400 naming the field and the constraint. Returns
/// how many were refused per `METHOD route` and constraint.
pub async fn assert_violations_refused(sim: &Sim) -> BTreeMap<(String, &'static str), usize> {
    let mut sent = BTreeMap::new();
    for entry in sim.requests() {
        let written = entry.method == "POST" || entry.method == "PUT";
        if written && entry.template.starts_with("/cloudapi/") && entry.request_body.is_object() {
            // The last body of each kind: a later one is as complete as any.
            sent.insert((entry.method.clone(), entry.template.clone()), entry);
        }
    }
    let http = reqwest::Client::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .expect("an HTTP client");
    let mut tokens = BTreeMap::new();
    let mut refused = BTreeMap::new();
    for ((method, template), entry) in sent {
        let version = entry.api_version.clone();
        if !tokens.contains_key(&version) {
            tokens.insert(version.clone(), login(&http, sim, &version).await);
        }
        let token = &tokens[&version];
        let violations = Violation::all_of(
            Spec::embedded_at(&version),
            &method,
            &template,
            &entry.request_body,
        );
        for violation in violations {
            let answer = http
                .request(
                    method.parse().expect("a method"),
                    format!("{}{}", sim.base_url(), entry.path),
                )
                .bearer_auth(token)
                .header("accept", format!("application/json;version={version}"))
                .json(&violation.body)
                .send()
                .await
                .expect("vcdsim answers");
            let status = answer.status().as_u16();
            let text = answer.text().await.unwrap_or_default();
            assert!(
                status == 400
                    && text.contains(&violation.path)
                    && text.contains(violation.kind.keyword()),
                "{method} {template} with {} broken at {}: {status} {text}",
                violation.kind.keyword(),
                violation.path
            );
            *refused
                .entry((format!("{method} {template}"), violation.kind.keyword()))
                .or_default() += 1;
        }
    }
    // The broken bodies were ours, not the CCM's: the log's own check (as
    // a test ends) must not count them.
    sim.reset_log();
    refused
}

async fn login(http: &reqwest::Client, sim: &Sim, version: &str) -> String {
    let tenant = sim.tenant().expect("the scenario has a tenant");
    let answer = http
        .post(format!("{}/cloudapi/1.0.0/sessions", sim.base_url()))
        .basic_auth(
            format!("{}@{}", tenant.user, tenant.org),
            Some(&tenant.password),
        )
        .header("accept", format!("application/json;version={version}"))
        .send()
        .await
        .expect("vcdsim answers the login");
    answer
        .headers()
        .get("x-vmware-vcloud-access-token")
        .and_then(|v| v.to_str().ok())
        .expect("an access token")
        .to_string()
}

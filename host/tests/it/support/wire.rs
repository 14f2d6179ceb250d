//! Wire truth: every request body a test sent vcdsim, checked strictly
//! (unknown property = failure) against the CloudAPI spec of the API
//! version it was sent under (the 37.2 file plus what later versions add).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use vcdsim::Sim;
use vcdsim::openapi::Spec;

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

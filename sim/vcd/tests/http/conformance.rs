//! Every CloudAPI body the simulator returns, and every body the tests
//! send, validates against its definition in the real 37.2 spec. The spec
//! is read at test time from `VCDSIM_OPENAPI`, else from the shared copy.

use std::collections::BTreeSet;

use vcdsim::{LogEntry, Scenario, Sim};

use crate::exercise::{exercise_ip_blocks, exercise_ip_space};
use crate::support::{CLOUDAPI, start};
use vcdsim::openapi::Spec;

/// Per endpoint: method, path under `/cloudapi/1.0.0`, and the spec
/// definition of its response body ("" when none). Request bodies are
/// checked against the body the spec's operation takes.
const CONTRACTS: &[(&str, &str, &str)] = &[
    ("POST", "/sessions", "Session"),
    ("POST", "/sessions/provider", "Session"),
    ("GET", "/sessions/current", "Session"),
    ("GET", "/roles/{id}/rights", "EntityReferences"),
    ("GET", "/orgs", "Orgs"),
    ("GET", "/orgs/{id}", "Org"),
    ("GET", "/vdcs", "OrgVdcs"),
    ("GET", "/vdcs/{id}", "OrgVdc"),
    ("GET", "/vdcGroups", "VdcGroups"),
    ("GET", "/vdcGroups/{id}", "VdcGroup"),
    ("GET", "/orgVdcNetworks", "VdcNetworks"),
    ("GET", "/orgVdcNetworks/{id}", "VdcNetwork"),
    ("GET", "/edgeGateways", "EdgeGateways"),
    ("GET", "/edgeGateways/{id}", "EdgeGateway"),
    (
        "GET",
        "/edgeGateways/{id}/firewall/rules",
        "EdgeFirewallRules",
    ),
    ("PUT", "/edgeGateways/{id}/firewall/rules", ""),
    (
        "GET",
        "/edgeGateways/{id}/firewall/rules/{rule}",
        "EdgeFirewallRule",
    ),
    ("PUT", "/edgeGateways/{id}/firewall/rules/{rule}", ""),
    ("DELETE", "/edgeGateways/{id}/firewall/rules/{rule}", ""),
    ("POST", "/firewallGroups", ""),
    ("GET", "/firewallGroups/summaries", "FirewallGroups"),
    ("GET", "/firewallGroups/{id}", "FirewallGroupDetails"),
    ("PUT", "/firewallGroups/{id}", ""),
    ("DELETE", "/firewallGroups/{id}", ""),
    (
        "GET",
        "/edgeGateways/{id}/usedIpAddresses",
        "GatewayUsedIpAddresses",
    ),
    (
        "GET",
        "/edgeGateways/{id}/loadBalancer",
        "EdgeGatewayLoadBalancerConfig",
    ),
    ("PUT", "/edgeGateways/{id}/loadBalancer", ""),
    ("GET", "/ipSpaces/summaries", "IpSpaceSummaries"),
    ("GET", "/ipSpaces/{id}", "IpSpace"),
    (
        "GET",
        "/ipSpaces/floatingIpSuggestions",
        "IpSpaceFloatingIpSuggestions",
    ),
    ("POST", "/ipSpaces/{id}/allocate", ""),
    ("GET", "/ipSpaces/{id}/allocations", "IpSpaceIpAllocations"),
    (
        "GET",
        "/ipSpaces/{id}/allocations/{allocation}",
        "IpSpaceIpAllocation",
    ),
    ("PUT", "/ipSpaces/{id}/allocations/{allocation}", ""),
    ("GET", "/edgeGateways/{id}/nat/rules", "EdgeNatRules"),
    ("POST", "/edgeGateways/{id}/nat/rules", ""),
    ("GET", "/edgeGateways/{id}/nat/rules/{rule}", "EdgeNatRule"),
    ("PUT", "/edgeGateways/{id}/nat/rules/{rule}", ""),
    ("GET", "/applicationPortProfiles", "ApplicationPortProfiles"),
    ("POST", "/applicationPortProfiles", ""),
    (
        "GET",
        "/applicationPortProfiles/{id}",
        "ApplicationPortProfile",
    ),
    ("PUT", "/applicationPortProfiles/{id}", ""),
    (
        "GET",
        "/loadBalancer/serviceEngineGroups/assignments",
        "LoadBalancerServiceEngineGroupAssignments",
    ),
    (
        "GET",
        "/loadBalancer/serviceEngineGroups/assignments/{id}",
        "LoadBalancerServiceEngineGroupAssignment",
    ),
    ("GET", "/ssl/certificateLibrary", "CertificateLibraryItems"),
    ("POST", "/ssl/certificateLibrary", "CertificateLibraryItem"),
    (
        "GET",
        "/ssl/certificateLibrary/{id}",
        "CertificateLibraryItem",
    ),
    (
        "PUT",
        "/ssl/certificateLibrary/{id}",
        "CertificateLibraryItem",
    ),
    ("POST", "/loadBalancer/pools", ""),
    ("GET", "/loadBalancer/pools/{id}", "EdgeLoadBalancerPool"),
    ("PUT", "/loadBalancer/pools/{id}", ""),
    (
        "GET",
        "/edgeGateways/{id}/loadBalancer/poolSummaries",
        "EdgeLoadBalancerPoolSummaries",
    ),
    ("POST", "/loadBalancer/virtualServices", ""),
    (
        "GET",
        "/loadBalancer/virtualServices/{id}",
        "EdgeLoadBalancerVirtualService",
    ),
    ("PUT", "/loadBalancer/virtualServices/{id}", ""),
    (
        "GET",
        "/edgeGateways/{id}/loadBalancer/virtualServiceSummaries",
        "EdgeLoadBalancerVirtualServiceSummaries",
    ),
    ("GET", "/entities/{id}", "DefinedEntity"),
    ("PUT", "/entities/{id}", "DefinedEntity"),
    ("POST", "/entityTypes/{type_id}", ""),
    (
        "GET",
        "/entities/types/{vendor}/{nss}/{version}",
        "DefinedEntities",
    ),
];

fn contract(method: &str, template: &str) -> Option<&'static str> {
    CONTRACTS
        .iter()
        .find(|(m, path, _)| *m == method && template.strip_prefix(CLOUDAPI) == Some(path))
        .map(|(_, _, response)| *response)
}

fn check_log(
    spec: &Spec,
    log: &[LogEntry],
    covered: &mut BTreeSet<String>,
    errors: &mut Vec<String>,
) {
    for entry in log.iter().filter(|e| e.template.starts_with(CLOUDAPI)) {
        let what = format!("{} {} → {}", entry.method, entry.path, entry.status);
        if entry.status >= 400 {
            spec.check("Error", &entry.response_body, &what, errors);
            continue;
        }
        let Some(response) = contract(&entry.method, &entry.template) else {
            continue;
        };
        covered.insert(entry.counter_key());
        if !response.is_empty() && !entry.response_body.is_null() {
            spec.check(
                response,
                &entry.response_body,
                &format!("{what} response"),
                errors,
            );
        }
        if !entry.request_body.is_null()
            && let Err(violations) =
                spec.check_request(&entry.method, &entry.template, &entry.request_body)
        {
            errors.extend(violations);
        }
    }
}

/// The spec, or `None` (said on stderr) when the file is absent.
fn load_spec() -> Option<Spec> {
    let path = Spec::default_path();
    if !path.exists() {
        eprintln!(
            "conformance: SKIPPED, the CloudAPI spec is absent at {} (set VCDSIM_OPENAPI)",
            path.display()
        );
        return None;
    }
    Some(Spec::load(&path).unwrap_or_else(|e| panic!("{e}")))
}

/// Every body `sim` logged so far validates against the spec (skipped
/// when the spec file is absent): for tests of other worlds.
pub fn assert_conforms(sim: &Sim) {
    let Some(spec) = load_spec() else { return };
    let mut errors = Vec::new();
    check_log(&spec, &sim.requests(), &mut BTreeSet::new(), &mut errors);
    assert!(errors.is_empty(), "spec violations:\n{}", errors.join("\n"));
}

#[tokio::test]
async fn bodies_validate_against_the_cloudapi_spec() {
    let Some(spec) = load_spec() else { return };
    let (mut covered, mut errors) = (BTreeSet::new(), Vec::new());
    let blocks = start(Scenario::default_scenario()).await;
    exercise_ip_blocks(&blocks).await;
    check_log(&spec, &blocks.requests(), &mut covered, &mut errors);
    let spaces = start(Scenario::ip_space()).await;
    exercise_ip_space(&spaces).await;
    check_log(&spec, &spaces.requests(), &mut covered, &mut errors);
    let groups = start(Scenario::dc_group()).await;
    crate::dc_groups::exercise(&groups).await;
    check_log(&spec, &groups.requests(), &mut covered, &mut errors);

    assert!(
        errors.is_empty(),
        "{} spec violations:\n{}",
        errors.len(),
        errors.join("\n")
    );
    let missing: Vec<String> = CONTRACTS
        .iter()
        .map(|(method, path, _)| format!("{method} {CLOUDAPI}{path}"))
        .filter(|key| !covered.contains(key))
        .collect();
    assert!(missing.is_empty(), "endpoints not exercised: {missing:#?}");
}

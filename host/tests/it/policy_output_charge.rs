//! The output a policy suite reports (`CallCost::output_bytes`) is what
//! wasmtime charged the lift against `OUTPUT_BYTES`, to the byte: a decision
//! sized to exactly the bound comes back and is reported at the bound, one
//! byte more is refused. The decision carries every kind of 0.3.0 traffic
//! the default policy writes (persistence with a cookie, security, request
//! and response rules), so a type the count forgets fails here.

use std::sync::Arc;

use vcd_ccm::policy::model::{Decision, DecisionInput};
use vcd_ccm::policy::sandbox::OUTPUT_BYTES;
use vcd_ccm::policy::{CallError, EvalError, Policy, PolicyEngine, loader};

/// A Service whose HTTPS port's certificate alias is `alias_len` bytes, with
/// every annotation that makes the default policy write HTTP rules.
fn input(alias_len: usize) -> DecisionInput {
    let alias = "c".repeat(alias_len);
    let yaml = format!(
        r#"
service:
  namespace: shop
  name: web
  uid: u-1
  ip-families: [ipv4]
  annotations:
    service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias: {alias}
    vcd-ccm.io/persistence: "http-cookie:session"
    vcd-ccm.io/https-redirect: "true"
    vcd-ccm.io/forwarded-headers: "true"
    vcd-ccm.io/hsts: "max-age=31536000; includeSubDomains"
    vcd-ccm.io/rate-limit: "100/1s"
  ports:
  - {{name: http, protocol: tcp, port: 80, node-port: 30080, app-protocol: http}}
  - {{name: https, protocol: tcp, port: 443, node-port: 30443, app-protocol: https}}
namespace: {{name: shop}}
cluster:
  cluster-id: urn:vcloud:entity:vmware:capvcdCluster:0001
  org: acme
  vdc: acme-vdc
  gateway: edge-1
  vcd-api-version: "38.0"
  capabilities: {{shared-vip: true, http-rules: true}}
pools:
- {{name: public, source: ip-block, ranges: [{{first: 203.0.113.10, last: 203.0.113.20}}], free-count: 11}}
certificates: [{{alias: {alias}}}]
profiles: [l4-tcp, l4-udp, l4-tls, http, https]
"#
    );
    vcd_ccm::policy::yaml::from_str(&yaml).expect("the input parses")
}

fn decide(
    engine: &Arc<PolicyEngine>,
    policy: &Policy,
    alias_len: usize,
) -> (Result<Decision, EvalError>, Option<usize>) {
    let (result, cost) = engine.block_on(policy.decide_measured(&input(alias_len)));
    (result, cost.output_bytes)
}

#[test]
fn the_reported_output_is_the_charge_wasmtime_makes() {
    let engine = PolicyEngine::new().expect("engine");
    let policy = engine
        .block_on(loader::load_default(
            &engine,
            "{}".into(),
            Default::default(),
        ))
        .expect("the default policy loads");

    let (small, charged) = decide(&engine, &policy, 1);
    let decision = small.expect("decides");
    let kinds = &decision.traffic;
    assert!(
        kinds.iter().any(|t| !t.http.security.is_empty())
            && kinds.iter().any(|t| !t.http.request.is_empty())
            && kinds.iter().any(|t| !t.http.response.is_empty()),
        "every rule list is exercised: {kinds:?}"
    );
    // The alias appears once in the answer, so it adds its length alone.
    let fixed = charged.expect("counted") - 1;
    let at_bound = OUTPUT_BYTES - fixed;

    // Lifted, then refused by the host's own checks: an alias that long is
    // cut before it is compared with the library.
    let (fits, charged) = decide(&engine, &policy, at_bound);
    assert!(
        matches!(fits, Err(EvalError::InvalidDecision { .. })),
        "a decision of exactly {OUTPUT_BYTES} bytes is lifted"
    );
    assert_eq!(charged, Some(OUTPUT_BYTES));

    let (over, charged) = decide(&engine, &policy, at_bound + 1);
    assert!(
        matches!(
            over,
            Err(EvalError::Call {
                cause: CallError::OutputTooLarge { .. },
                ..
            })
        ),
        "one byte more is refused by the lift"
    );
    assert_eq!(charged, None, "nothing was returned to count");
}

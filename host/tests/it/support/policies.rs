//! Policy fixtures: the misbehaving test component and a decision input.

use std::sync::Arc;

use vcd_ccm::policy::builtin::ARTIFACTS_DIR;
use vcd_ccm::policy::loader::{self, PolicySource};
use vcd_ccm::policy::model::{DecisionInput, Protocol, ServicePort};
use vcd_ccm::policy::{Limits, Policy, PolicyEngine};

/// `policies/testdata/misbehaving`, built by build.rs.
pub fn misbehaving_wasm() -> Vec<u8> {
    std::fs::read(format!("{ARTIFACTS_DIR}/misbehaving.wasm"))
        .expect("build.rs builds the misbehaving fixture")
}

/// The misbehaving policy doing `behaviour` (its config) under `limits`.
pub async fn misbehaving(engine: &Arc<PolicyEngine>, behaviour: &str, limits: Limits) -> Policy {
    let bytes = misbehaving_wasm();
    let source = PolicySource {
        name: "misbehaving",
        bytes: &bytes,
        pin: None,
        config: behaviour.into(),
        limits,
    };
    loader::load(engine, source)
        .await
        .expect("the misbehaving policy loads")
}

/// Writes `dir` as a policy ConfigMap holding one policy `name`: the
/// built-in policy's component, pinned, with `settings` (the entry's YAML
/// lines after `sha256`, indented by four spaces).
pub fn default_policy_as(dir: &std::path::Path, name: &str, settings: &str) {
    std::fs::create_dir_all(dir).expect("the policy directory is created");
    let wasm = std::fs::read(format!("{ARTIFACTS_DIR}/default_policy.wasm")).expect("built");
    std::fs::write(dir.join(format!("{name}.wasm")), &wasm).expect("copied");
    let manifest = format!(
        "policies:\n  - name: {name}\n    sha256: {}\n{settings}",
        loader::sha256_hex(&wasm)
    );
    std::fs::write(dir.join("policies.yaml"), manifest).expect("the manifest is written");
}

/// Service shop/web with one TCP port 80 and an IP-block pool.
pub fn web_input() -> DecisionInput {
    let mut input: DecisionInput = serde_yaml_ng::from_str(
        r#"
service: {namespace: shop, name: web, uid: u-1, ip-families: [ipv4]}
namespace: {name: shop}
pools: [{name: public, source: ip-block, ranges: [{first: 203.0.113.10, last: 203.0.113.20}], free-count: 11}]
profiles: [l4-tcp, l4-udp, http, https]
"#,
    )
    .expect("the input parses");
    input.service.ports.push(ServicePort {
        name: "http".into(),
        protocol: Protocol::Tcp,
        port: 80,
        node_port: Some(30080),
        app_protocol: None,
    });
    input
}

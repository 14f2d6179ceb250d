//! The built-in `default` policy, compiled from `policies/default` by `build.rs`.
//! It goes through the same loader as any provider's policy.

use std::sync::Arc;

use super::engine::PolicyEngine;
use super::errors::LoadError;
use super::loader::{self, Policy, PolicySource};
use super::sandbox::Limits;

/// The name the built-in policy is known by.
pub const DEFAULT_POLICY_NAME: &str = "default";

/// The default policy component.
pub const DEFAULT_POLICY_WASM: &[u8] = include_bytes!(concat!(
    env!("VCD_CCM_POLICY_ARTIFACTS"),
    "/default_policy.wasm"
));

/// Where `build.rs` left the example and test policy components.
pub const ARTIFACTS_DIR: &str = env!("VCD_CCM_POLICY_ARTIFACTS");

/// Loads the default policy with the given settings (JSON text).
pub async fn load_default(engine: &Arc<PolicyEngine>, config: String) -> Result<Policy, LoadError> {
    loader::load(
        engine,
        PolicySource {
            name: DEFAULT_POLICY_NAME,
            bytes: DEFAULT_POLICY_WASM,
            pin: None,
            config,
            limits: Limits::default(),
        },
    )
    .await
}

//! The built-in `default` policy, compiled from `policies/default` by
//! `build.rs`: its name and its component. It goes through the same loader
//! as any provider's policy ([`super::loader::load_default`]).

/// The name the built-in policy is known by.
pub const DEFAULT_POLICY_NAME: &str = "default";

/// The default policy component.
pub const DEFAULT_POLICY_WASM: &[u8] = include_bytes!(concat!(
    env!("VCD_CCM_POLICY_ARTIFACTS"),
    "/default_policy.wasm"
));

/// Where `build.rs` left the example and test policy components.
pub const ARTIFACTS_DIR: &str = env!("VCD_CCM_POLICY_ARTIFACTS");

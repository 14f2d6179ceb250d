//! Builds the policy components in `policies/` for `wasm32-wasip2` with a nested
//! cargo in its own target directory, so the default policy can be embedded with
//! `include_bytes!` and the example and test policies are at hand for tests.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir.parent().expect("host/ lives inside the workspace").to_path_buf();
    let policies = root.join("policies");
    let target_dir = env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let target_dir = target_dir.join("policies");

    for path in ["wit", "policies/Cargo.toml", "policies/Cargo.lock", "policies/default", "policies/examples", "policies/testdata"] {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }

    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&policies)
        .args(["build", "--release", "--locked", "--target", "wasm32-wasip2", "--workspace", "--target-dir"])
        .arg(&target_dir);
    // The outer build's settings (flags, wrappers such as clippy-driver, the
    // host target) must not leak into the guest build.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
        "CARGO_PROFILE_RELEASE_DEBUG",
    ] {
        build.env_remove(var);
    }
    let status = build.status().expect("running cargo for the policy components");
    assert!(status.success(), "building the policy components in {} failed", policies.display());

    let artifacts = target_dir.join("wasm32-wasip2").join("release");
    println!("cargo:rustc-env=VCD_CCM_POLICY_ARTIFACTS={}", artifacts.display());
}

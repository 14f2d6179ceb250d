//! Builds the policy components in `policies/` for `wasm32-wasip2` with a nested
//! cargo, so the default policy can be embedded with `include_bytes!` and the
//! example and test policies are at hand for tests. The output goes where a
//! policy author's own `cargo build` in `policies/` puts it
//! (`policies/target/wasm32-wasip2/release`), so suites can name it by path.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("host/ lives inside the workspace")
        .to_path_buf();
    let policies = root.join("policies");
    let target_dir = policies.join("target");

    // Sources only: editing a suite or a README must not rebuild the host.
    let mut watched = vec![
        "wit".to_string(),
        "policies/Cargo.toml".into(),
        "policies/Cargo.lock".into(),
    ];
    for member in [
        "default",
        "examples/namespace-pools",
        "testdata/misbehaving",
        "testdata/stalls-describe",
    ] {
        watched.push(format!("policies/{member}/src"));
        watched.push(format!("policies/{member}/Cargo.toml"));
    }
    for path in watched {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }

    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&policies)
        .args([
            "build",
            "--release",
            "--locked",
            "--target",
            "wasm32-wasip2",
            "--workspace",
            "--target-dir",
        ])
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
    let status = build
        .status()
        .expect("running cargo for the policy components");
    assert!(
        status.success(),
        "building the policy components in {} failed",
        policies.display()
    );

    let artifacts = target_dir.join("wasm32-wasip2").join("release");
    println!(
        "cargo:rustc-env=VCD_CCM_POLICY_ARTIFACTS={}",
        artifacts.display()
    );
}

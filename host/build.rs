//! Builds the policy components in `policies/` for `wasm32-wasip2` with a nested
//! cargo, so the default policy can be embedded with `include_bytes!` and the
//! example and test policies are at hand for tests. The output goes where a
//! policy author's own `cargo build` in `policies/` puts it
//! (`policies/target/wasm32-wasip2/release`), so suites can name it by path.

use std::env;
use std::path::{Path, PathBuf};
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
        "testdata/frozen-0-3",
    ] {
        watched.push(format!("policies/{member}/src"));
        watched.push(format!("policies/{member}/Cargo.toml"));
    }
    for path in watched {
        println!("cargo:rerun-if-changed={}", root.join(path).display());
    }

    ensure_wasm_target();

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

const WASM_TARGET: &str = "wasm32-wasip2";

/// rustup installs the targets of `rust-toolchain.toml` only together with the
/// toolchain, so a machine that already had Rust 1.95 lacks `wasm32-wasip2`.
/// Adding it here keeps `cargo run` and `cargo test` the only commands a user
/// needs; without rustup, the panic says what to install.
fn ensure_wasm_target() {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .expect("running rustc --print sysroot");
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if has_target(&sysroot) {
        return;
    }
    // RUSTUP_TOOLCHAIN names the toolchain this build runs under, so the target
    // goes to it and not to the machine's default.
    let mut add = Command::new("rustup");
    add.args(["target", "add", WASM_TARGET]);
    if let Some(toolchain) = env::var_os("RUSTUP_TOOLCHAIN") {
        add.arg("--toolchain").arg(toolchain);
    }
    println!(
        "cargo:warning=the {WASM_TARGET} target is missing from {}: adding it with rustup",
        sysroot.display()
    );
    let added = add.status().map(|status| status.success());
    assert!(
        matches!(added, Ok(true)) && has_target(&sysroot),
        "the policy components need the {WASM_TARGET} standard library, which {} lacks, \
         and `rustup target add {WASM_TARGET}` did not add it ({added:?}); \
         install it for this toolchain and build again",
        sysroot.display()
    );
}

fn has_target(sysroot: &Path) -> bool {
    sysroot
        .join("lib/rustlib")
        .join(WASM_TARGET)
        .join("lib")
        .is_dir()
}

//! The import allow-list: what a policy component may ask the host for.
//!
//! Mainstream toolchains import more than a policy uses: wit-bindgen's Rust
//! std links `wasi:cli`, `wasi:io`, `wasi:clocks`, `wasi:random` and
//! `wasi:filesystem`; componentize-py's CPython adds `wasi:sockets`;
//! componentize-js's StarlingMonkey adds `wasi:http` (for `fetch`). The host
//! links every one of them, and each grants nothing: no preopened directory,
//! no environment, stdout and stderr into a bounded pipe, no socket address or
//! name lookup allowed, every HTTP request refused (`sandbox.rs`).

use wasmtime::Engine;
use wasmtime::component::Component;

/// Interface families a policy may import, with the version prefix each is
/// served at; within a family every listed interface is allowed.
const ALLOWED: &[(&str, &str, &[&str])] = &[
    ("vcd:lb-policy", "0.1.|0.2.|0.3.|0.4.", &["host", "types"]),
    (
        "wasi:cli",
        "0.2.",
        &[
            "environment",
            "exit",
            "stdin",
            "stdout",
            "stderr",
            "terminal-input",
            "terminal-output",
            "terminal-stdin",
            "terminal-stdout",
            "terminal-stderr",
        ],
    ),
    ("wasi:io", "0.2.", &["error", "poll", "streams"]),
    ("wasi:clocks", "0.2.", &["monotonic-clock", "wall-clock"]),
    (
        "wasi:random",
        "0.2.",
        &["random", "insecure", "insecure-seed"],
    ),
    ("wasi:filesystem", "0.2.", &["types", "preopens"]),
    (
        "wasi:sockets",
        "0.2.",
        &[
            "network",
            "instance-network",
            "tcp",
            "tcp-create-socket",
            "udp",
            "udp-create-socket",
            "ip-name-lookup",
        ],
    ),
    ("wasi:http", "0.2.", &["types", "outgoing-handler"]),
];

/// The component's imports, in declaration order.
pub fn list(engine: &Engine, component: &Component) -> Vec<String> {
    component
        .component_type()
        .imports(engine)
        .map(|(name, _)| name.to_string())
        .collect()
}

/// Whether the host serves this import.
pub fn is_allowed(import: &str) -> bool {
    let (interface, version) = import.split_once('@').unwrap_or((import, ""));
    let Some((package, name)) = interface.split_once('/') else {
        return false;
    };
    ALLOWED.iter().any(|(family, versions, names)| {
        *family == package
            && names.contains(&name)
            && versions
                .split('|')
                .any(|prefix| version.starts_with(prefix))
    })
}

/// The allow-list as text for error messages: each interface once, grouped
/// by package with the versions served (`wasi:io/{error,poll,streams}@0.2.x`).
pub fn allowed_summary() -> String {
    let families: Vec<String> = ALLOWED
        .iter()
        .map(|(family, versions, names)| {
            let versions = versions.replace('|', "x, ");
            format!("{family}/{{{}}}@{versions}x", names.join(","))
        })
        .collect();
    families.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolchain_imports_are_allowed_at_the_versions_served() {
        for import in [
            "vcd:lb-policy/host@0.1.0",
            "vcd:lb-policy/types@0.2.0",
            "vcd:lb-policy/types@0.3.0",
            "vcd:lb-policy/types@0.4.0",
            "wasi:cli/environment@0.2.3",
            "wasi:sockets/ip-name-lookup@0.2.9",
            "wasi:http/outgoing-handler@0.2.10",
        ] {
            assert!(is_allowed(import), "{import}");
        }
        for import in [
            "vcd:lb-policy/host@0.5.0",
            "wasi:http/incoming-handler@0.2.0",
            "wasi:sockets/tcp@0.3.0",
            "wasi:cli/run@0.2.0",
            "acme:tools/exec@1.0.0",
            "wasi:io",
        ] {
            assert!(!is_allowed(import), "{import}");
        }
    }

    #[test]
    fn the_summary_names_each_interface_once() {
        let summary = allowed_summary();
        assert!(
            summary
                .starts_with("vcd:lb-policy/{host,types}@0.1.x, 0.2.x, 0.3.x, 0.4.x; wasi:cli/{"),
            "{summary}"
        );
        for name in ["tcp-create-socket", "outgoing-handler", "preopens"] {
            assert_eq!(summary.matches(name).count(), 1, "{name}: {summary}");
        }
    }
}

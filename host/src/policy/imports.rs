//! The import allow-list: what a policy component may ask the host for.

use wasmtime::Engine;
use wasmtime::component::Component;

/// Interfaces a policy may import, without their version. The WASI ones are what
/// a Rust `wasm32-wasip2` std build pulls in; the host serves them from an
/// empty context (no files, no environment, no sockets, a frozen wall clock).
const ALLOWED: &[(&str, &str)] = &[
    ("vcd:lb-policy/host", "0.1."),
    ("vcd:lb-policy/types", "0.1."),
    ("vcd:lb-policy/host", "0.2."),
    ("vcd:lb-policy/types", "0.2."),
    ("wasi:cli/environment", "0.2."),
    ("wasi:cli/exit", "0.2."),
    ("wasi:cli/stdin", "0.2."),
    ("wasi:cli/stdout", "0.2."),
    ("wasi:cli/stderr", "0.2."),
    ("wasi:cli/terminal-input", "0.2."),
    ("wasi:cli/terminal-output", "0.2."),
    ("wasi:cli/terminal-stdin", "0.2."),
    ("wasi:cli/terminal-stdout", "0.2."),
    ("wasi:cli/terminal-stderr", "0.2."),
    ("wasi:io/error", "0.2."),
    ("wasi:io/poll", "0.2."),
    ("wasi:io/streams", "0.2."),
    ("wasi:clocks/monotonic-clock", "0.2."),
    ("wasi:clocks/wall-clock", "0.2."),
    ("wasi:random/random", "0.2."),
    ("wasi:random/insecure", "0.2."),
    ("wasi:random/insecure-seed", "0.2."),
    ("wasi:filesystem/types", "0.2."),
    ("wasi:filesystem/preopens", "0.2."),
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
    ALLOWED
        .iter()
        .any(|(name, prefix)| *name == interface && version.starts_with(prefix))
}

/// The allow-list as text for error messages.
pub fn allowed_summary() -> String {
    let names: Vec<&str> = ALLOWED.iter().map(|(name, _)| *name).collect();
    names.join(", ")
}

//! The library's module graph runs one way: no top-level module of
//! `host/src` reaches back to one that uses it. Run it with
//! `cargo test -p vcd-ccm --test it structure -- --nocapture` to print the
//! graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module → the top-level modules its code names (`crate::x`).
/// Comments and `#[cfg(test)]` modules do not count.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("host/src is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).expect("below host/src");
            let top = relative
                .components()
                .next()
                .and_then(|c| c.as_os_str().to_str())
                .map(|name| name.trim_end_matches(".rs").to_string())
                .expect("a module name");
            let text = std::fs::read_to_string(&path).expect("a source file");
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            let uses = graph.entry(top.clone()).or_default();
            for line in code.lines() {
                let line = line.split("//").next().unwrap_or_default();
                for (index, _) in line.match_indices("crate::") {
                    let name: String = line[index + "crate::".len()..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != top {
                        uses.insert(name);
                    }
                }
            }
        }
    }
    graph
}

/// A path from `from` back to `to`, if there is one.
fn path_between(
    graph: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    to: &str,
) -> Option<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![vec![from.to_string()]];
    while let Some(path) = stack.pop() {
        let last = path.last().expect("a non-empty path");
        if last == to {
            return Some(path);
        }
        for next in graph.get(last).into_iter().flatten() {
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    None
}

#[test]
fn the_library_module_graph_has_no_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    let mut cycles = Vec::new();
    for (module, uses) in &graph {
        println!(
            "{module} -> {}",
            Vec::from_iter(uses.iter().cloned()).join(", ")
        );
        for used in uses {
            if let Some(back) = path_between(&graph, used, module) {
                cycles.push(format!("{module} -> {}", back.join(" -> ")));
            }
        }
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
    // The layers DESIGN.md names: nothing below the controllers knows them,
    // and serving is handed its checks.
    for low in ["config", "lb", "instances", "policy", "vcd", "serve"] {
        assert!(
            !graph[low].contains("controllers") && !graph[low].contains("manager"),
            "{low} reaches up: {:?}",
            graph[low]
        );
    }
}

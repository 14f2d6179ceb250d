//! Every relative link in the repository's Markdown leads somewhere: the
//! file exists and, for a `#fragment` into a Markdown file, that file has a
//! heading with that anchor (GitHub's rule: lower case, punctuation but `-`
//! and `_` dropped, spaces to `-`, `-1`, `-2`… for repeats). Links inside
//! code blocks are not links.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// Folders that hold what builds and tools leave, not the project's pages.
const SKIPPED: [&str; 5] = ["target", ".git", "node_modules", ".venv", "bindings"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if !SKIPPED.contains(&name.as_str()) {
                markdown_files(&path, found);
            }
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// The text outside fenced code blocks.
fn prose(text: &str) -> String {
    let mut inside = false;
    let mut kept = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
        } else if !inside {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut found = BTreeSet::new();
    for line in prose(text).lines() {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        let Some(heading) = line.get(hashes..).and_then(|h| h.strip_prefix(' ')) else {
            continue;
        };
        if hashes == 0 || hashes > 6 {
            continue;
        }
        let base = anchor(heading);
        let repeats = seen.entry(base.clone()).or_insert(0);
        found.insert(match *repeats {
            0 => base,
            n => format!("{base}-{n}"),
        });
        *repeats += 1;
    }
    found
}

/// `](target)` links of the prose.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut found = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find([')', ' ', '\n']).unwrap_or(rest.len());
        found.push(rest[..end].to_string());
    }
    found
}

fn normalize(path: &Path) -> PathBuf {
    let mut parts: Vec<Component> = Vec::new();
    for part in path.components() {
        match part {
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            Component::CurDir => {}
            other => parts.push(other),
        }
    }
    parts.iter().collect()
}

#[test]
fn every_relative_link_in_the_markdown_leads_somewhere() {
    let root = normalize(&repo());
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(files.len() >= 20, "the pages were not found: {files:?}");
    let texts: BTreeMap<PathBuf, String> = files
        .iter()
        .map(|f| (f.clone(), std::fs::read_to_string(f).unwrap()))
        .collect();
    let mut broken = Vec::new();
    for (file, text) in &texts {
        for link in links(text) {
            let scheme = link
                .split_once(':')
                .is_some_and(|(s, _)| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic()));
            if scheme || link.starts_with('/') {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((&link, ""));
            let target = match path {
                "" => file.clone(),
                path => normalize(&file.parent().unwrap().join(path)),
            };
            let shown = file.strip_prefix(&root).unwrap_or(file).display();
            if !target.exists() {
                broken.push(format!("{shown}: {link}: no such file"));
                continue;
            }
            if fragment.is_empty() || target.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let text = texts
                .get(&target)
                .cloned()
                .unwrap_or_else(|| std::fs::read_to_string(&target).unwrap());
            if !anchors(&text).contains(fragment) {
                broken.push(format!("{shown}: {link}: no heading with that anchor"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_follow_githubs_rule() {
    let text =
        "# `lb/`: load balancers\n## Nodes ↔ VMs\n## A, b\n## A, b\n```\n# not a heading\n```\n";
    let found: Vec<String> = anchors(text).into_iter().collect();
    assert_eq!(found, ["a-b", "a-b-1", "lb-load-balancers", "nodes--vms"]);
    assert_eq!(
        links("[x](a.md#b) `c` [y](http://e)\n```\n[z](no.md)\n```\n"),
        ["a.md#b", "http://e"]
    );
}

#[test]
fn the_readme_is_a_front_door() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; move reference into docs/"
    );
    assert!(
        readme.starts_with(
            "# vcd-ccm\n\n```sh\ncargo run --release -- demo\ncargo test --workspace\n```\n"
        ),
        "README.md opens with the two commands"
    );
    let docs: BTreeSet<String> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    for page in docs {
        assert!(
            readme.contains(&format!("(docs/{page})")),
            "README.md does not link docs/{page}"
        );
    }
}

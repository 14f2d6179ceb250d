//! The YAML files in `manifests/`, read as Kubernetes objects.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub fn manifests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../manifests")
}

/// One object of a manifest file: its kind, namespace and name, and the
/// document itself.
#[derive(Clone, Debug)]
pub struct Document {
    pub file: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub body: Value,
}

impl Document {
    /// The object as its k8s-openapi type. It must serialise back to the
    /// same document, so a misspelt or misplaced key fails here instead of
    /// being dropped silently.
    pub fn typed<K: DeserializeOwned + Serialize>(&self) -> K {
        let what = format!("{} {} {}", self.file, self.kind, self.name);
        let typed: K = serde_json::from_value(self.body.clone())
            .unwrap_or_else(|e| panic!("{what}: not a valid {}: {e}", self.kind));
        // k8s-openapi writes apiVersion and kind too (and checks them on reading).
        let again = serde_json::to_value(&typed).expect("an object serialises");
        let mut lost = Vec::new();
        differences(&self.body, &again, String::new(), &mut lost);
        assert!(
            lost.is_empty(),
            "{what}: not understood by {}: {lost:?}",
            self.kind
        );
        typed
    }
}

/// The paths (JSON pointers) where `read` and `kept` differ.
fn differences(read: &Value, kept: &Value, path: String, out: &mut Vec<String>) {
    match (read, kept) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let (a, b) = (&a.get(key), &b.get(key));
                match (a, b) {
                    (Some(a), Some(b)) => differences(a, b, format!("{path}/{key}"), out),
                    _ => out.push(format!("{path}/{key}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (a, b)) in a.iter().zip(b).enumerate() {
                differences(a, b, format!("{path}/{i}"), out);
            }
        }
        (a, b) if a != b => out.push(path),
        _ => {}
    }
}

/// Every object of every `*.yaml` file under `manifests/` (kustomizations
/// and `tests/` folders aside: those hold `promtool` cases, not objects),
/// named by its path there.
pub fn all() -> Vec<Document> {
    let root = manifests_dir();
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("manifests/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                if path.file_name().is_none_or(|n| n != "tests") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "yaml")
                && path.file_name().is_some_and(|n| n != "kustomization.yaml")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .iter()
        .flat_map(|path| {
            let file = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let text = std::fs::read_to_string(path).expect("a manifest is readable");
            parse(&file, &text)
        })
        .collect()
}

/// What `kubectl kustomize <dir>` renders (`dir` relative to the repository).
pub fn rendered(dir: &str) -> Vec<Document> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(dir);
    rendered_at(&path, dir)
}

/// What `kubectl kustomize <path>` renders, named `what` in failures.
pub fn rendered_at(path: &Path, what: &str) -> Vec<Document> {
    let output = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(path)
        .output()
        .expect("kubectl (with kustomize) is installed; .ci/run checks it");
    assert!(
        output.status.success(),
        "kubectl kustomize {what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    parse(
        &format!("rendered {what}"),
        &String::from_utf8_lossy(&output.stdout),
    )
}

fn parse(file: &str, text: &str) -> Vec<Document> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|document| {
            let body =
                Value::deserialize(document).unwrap_or_else(|e| panic!("{file}: not YAML: {e}"));
            let field = |path: &str| body.pointer(path).and_then(Value::as_str);
            Document {
                kind: field("/kind").unwrap_or_default().to_string(),
                namespace: field("/metadata/namespace").map(str::to_string),
                name: field("/metadata/name").unwrap_or_default().to_string(),
                file: file.to_string(),
                body,
            }
        })
        .collect()
}

/// The one object of this kind and name, typed.
pub fn find<K: DeserializeOwned + Serialize>(documents: &[Document], kind: &str, name: &str) -> K {
    let matching: Vec<&Document> = documents
        .iter()
        .filter(|d| d.kind == kind && d.name == name)
        .collect();
    assert_eq!(matching.len(), 1, "exactly one {kind} {name} in manifests/");
    matching[0].typed()
}

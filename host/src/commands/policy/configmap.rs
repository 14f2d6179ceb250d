//! `vcd-ccm policy configmap`: the policy ConfigMap from a spec, checked as
//! the CCM will check it.
//!
//! The spec is `policies.yaml` with each `file` a path to the component,
//! relative to the spec, and `sha256` optional. The ConfigMap carries each
//! component under its file's base name in `binaryData`, and in `data` a
//! `policies.yaml` naming those base names with their sha256 pins, every other
//! key of each entry as given. That `policies.yaml` goes through the CCM's
//! manifest parser, and every component is loaded with its config and budgets
//! through the CCM's loader, so what the CCM would refuse is refused here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_yaml_ng::{Mapping, Value};

use crate::policy::loader::{self, PolicySource, sha256_hex};
use crate::policy::manifest::{MANIFEST_FILE, Manifest, ManifestError, PolicyEntry};
use crate::policy::oci::ComponentSource;
use crate::policy::suite::budget::Bytes;
use crate::policy::{LoadError, PolicyEngine};

/// The most bytes a ConfigMap's `data` and `binaryData` values may hold
/// together (the API server's check; keys and base64 are not counted).
pub const CONFIGMAP_BYTES: usize = 1 << 20;

/// How many of the largest values a size refusal names.
const LARGEST_NAMED: usize = 3;

/// Why the ConfigMap cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ConfigMapError {
    /// The spec or a component cannot be read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        error: std::io::Error,
    },
    /// The spec is not YAML, or not a list of policies.
    #[error("{}: {field}: {message}", spec.display())]
    Spec {
        /// The spec file.
        spec: PathBuf,
        /// The field, e.g. `policies[1].file`.
        field: String,
        /// What is wrong and what would work.
        message: String,
    },
    /// A `sha256` in the spec is not the component's.
    #[error(
        "{}: policies[{index}].sha256 is {pinned}, but {} has sha256 {actual}: remove the pin to take the file's, or build the component it pins",
        spec.display(), file.display()
    )]
    PinMismatch {
        /// The spec file.
        spec: PathBuf,
        /// The entry's index.
        index: usize,
        /// The component.
        file: PathBuf,
        /// The pin in the spec.
        pinned: String,
        /// The component's digest.
        actual: String,
    },
    /// Two different components would have the same key in `binaryData`.
    #[error(
        "{} and {} would both be {name} in the ConfigMap: rename one of the files",
        first.display(), second.display()
    )]
    SameBaseName {
        /// The base name both have.
        name: String,
        /// The first component.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// The generated `policies.yaml` is one the CCM would refuse.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The wasm engine could not be set up.
    #[error(transparent)]
    Engine(#[from] crate::policy::engine::EngineError),
    /// A component, with its config and budgets, is one the CCM would refuse.
    #[error("the CCM would refuse it: {0}")]
    Refused(#[from] LoadError),
    /// The ConfigMap is larger than the API server accepts.
    #[error(
        "the ConfigMap would hold {total} bytes of data and binaryData, over the {CONFIGMAP_BYTES}-byte (1 MiB) limit of a Kubernetes ConfigMap; largest: {}: ship the large ones from an OCI registry (vcd-ccm policy push FILE oci://REGISTRY/REPOSITORY:TAG, then an image: entry; Python and JavaScript components always need it), or make them smaller (for Rust, a release build with opt-level \"s\", lto, strip and panic = \"abort\")",
        largest.iter().map(|(key, bytes)| format!("{key} {bytes} bytes")).collect::<Vec<_>>().join(", ")
    )]
    TooLarge {
        /// The bytes of every value together.
        total: usize,
        /// The largest values, largest first: key and bytes.
        largest: Vec<(String, usize)>,
    },
}

/// Where the ConfigMap goes.
pub struct Target<'a> {
    /// `metadata.name`.
    pub name: &'a str,
    /// `metadata.namespace`.
    pub namespace: &'a str,
}

/// The ConfigMap for `spec` as YAML, after every check the CCM makes.
pub fn build(spec: &Path, target: Target<'_>) -> Result<String, ConfigMapError> {
    let text = std::fs::read_to_string(spec).map_err(|error| ConfigMapError::Read {
        path: spec.into(),
        error,
    })?;
    let (manifest_text, files) = Spec::new(spec).resolve(&text)?;
    let label = PathBuf::from(format!("{MANIFEST_FILE} (from {})", spec.display()));
    let manifest = Manifest::parse(&label, &manifest_text)?;
    let total = check_size(&manifest_text, &files)?;
    let engine = PolicyEngine::new()?;
    if let Some(default) = &manifest.default {
        // The cloud config's certAlias is not known here; the settings are.
        engine.block_on(loader::load_default(
            &engine,
            default.config_over("{}"),
            default.limits(),
        ))?;
    }
    for entry in &manifest.policies {
        // An image entry's component is in its registry, not in the ConfigMap.
        if let Ok(ComponentSource::File { name, .. }) = entry.source() {
            load(&engine, entry, &files[&name].1)?;
        }
    }
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(target.name.into()),
            namespace: Some(target.namespace.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(MANIFEST_FILE.into(), manifest_text)])),
        binary_data: Some(
            files
                .into_iter()
                .map(|(key, (_, bytes))| (key, ByteString(bytes)))
                .collect(),
        ),
        ..ConfigMap::default()
    };
    let yaml = serde_yaml_ng::to_string(&config_map).expect("a ConfigMap serialises");
    Ok(format!(
        "# vcd-ccm policy configmap {}: {} of the {} a ConfigMap may hold\n{yaml}",
        spec.display(),
        Bytes(total),
        Bytes(CONFIGMAP_BYTES)
    ))
}

/// Loads one entry's component as the CCM's policy directory does.
fn load(
    engine: &Arc<PolicyEngine>,
    entry: &PolicyEntry,
    bytes: &[u8],
) -> Result<(), ConfigMapError> {
    let source = PolicySource {
        name: &entry.name,
        bytes,
        pin: entry.sha256.as_deref(),
        config: entry.config_json(),
        limits: entry.limits(),
    };
    engine.block_on(loader::load(engine, source))?;
    Ok(())
}

/// Components by base name: where each was read from, and its bytes.
type Files = BTreeMap<String, (PathBuf, Vec<u8>)>;

/// The bytes of the ConfigMap's values together; refused over [`CONFIGMAP_BYTES`].
fn check_size(manifest: &str, files: &Files) -> Result<usize, ConfigMapError> {
    let mut sizes: Vec<(String, usize)> = files
        .iter()
        .map(|(key, (_, bytes))| (key.clone(), bytes.len()))
        .collect();
    sizes.push((MANIFEST_FILE.into(), manifest.len()));
    let total = sizes.iter().map(|(_, bytes)| bytes).sum();
    if total <= CONFIGMAP_BYTES {
        return Ok(total);
    }
    sizes.sort_by_key(|(_, bytes)| std::cmp::Reverse(*bytes));
    sizes.truncate(LARGEST_NAMED);
    Err(ConfigMapError::TooLarge {
        total,
        largest: sizes,
    })
}

/// A spec being turned into `policies.yaml` and its components.
struct Spec<'a> {
    path: &'a Path,
    dir: &'a Path,
}

impl<'a> Spec<'a> {
    fn new(path: &'a Path) -> Spec<'a> {
        Spec {
            path,
            dir: path.parent().unwrap_or(Path::new(".")),
        }
    }

    fn invalid(&self, field: String, message: impl Into<String>) -> ConfigMapError {
        ConfigMapError::Spec {
            spec: self.path.into(),
            field,
            message: message.into(),
        }
    }

    /// The spec's `policies.yaml` text (files as base names, sha256 pinned)
    /// and the components it names.
    fn resolve(&self, text: &str) -> Result<(String, Files), ConfigMapError> {
        let mut root: Value = serde_yaml_ng::from_str(text)
            .map_err(|e| self.invalid("(document)".into(), e.to_string()))?;
        let mut files = Files::new();
        // Only the built-in policy's settings: no component to resolve.
        if root.get("policies").is_none() && root.get("default").is_some() {
            let manifest = serde_yaml_ng::to_string(&root).expect("YAML values serialise");
            return Ok((manifest, files));
        }
        let policies = root
            .get_mut("policies")
            .and_then(Value::as_sequence_mut)
            .ok_or_else(|| self.invalid("policies".into(), "a list of policies is required"))?;
        for (index, entry) in policies.iter_mut().enumerate() {
            let given = entry.as_mapping().ok_or_else(|| {
                self.invalid(format!("policies[{index}]"), "each policy is a mapping")
            })?;
            *entry = Value::Mapping(self.entry(index, given, &mut files)?);
        }
        let manifest = serde_yaml_ng::to_string(&root).expect("YAML values serialise");
        Ok((manifest, files))
    }

    /// One entry with `file` as the component's base name and `sha256` its
    /// digest, first, then every other key as given.
    fn entry(
        &self,
        index: usize,
        given: &Mapping,
        files: &mut Files,
    ) -> Result<Mapping, ConfigMapError> {
        let text = |key: &str| match given.get(key) {
            None => Ok(None),
            Some(Value::String(value)) => Ok(Some(value.clone())),
            Some(_) => Err(self.invalid(format!("policies[{index}].{key}"), "must be a string")),
        };
        let name = text("name")?
            .ok_or_else(|| self.invalid(format!("policies[{index}].name"), "is required"))?;
        if given.contains_key("image") {
            return Ok(given.clone());
        }
        let file = text("file")?.unwrap_or_else(|| format!("{name}.wasm"));
        let path = self.dir.join(&file);
        let bytes = std::fs::read(&path).map_err(|error| ConfigMapError::Read {
            path: path.clone(),
            error,
        })?;
        let digest = sha256_hex(&bytes);
        if let Some(pinned) = text("sha256")?
            && !pinned.eq_ignore_ascii_case(&digest)
        {
            return Err(ConfigMapError::PinMismatch {
                spec: self.path.into(),
                index,
                file: path,
                pinned,
                actual: digest,
            });
        }
        let base = path
            .file_name()
            .and_then(|name| name.to_str())
            .ok_or_else(|| self.invalid(format!("policies[{index}].file"), "must name a file"))?
            .to_string();
        match files.get(&base) {
            Some((first, earlier)) if *earlier != bytes => {
                return Err(ConfigMapError::SameBaseName {
                    name: base,
                    first: first.clone(),
                    second: path,
                });
            }
            Some(_) => {}
            None => {
                files.insert(base.clone(), (path, bytes));
            }
        }
        let mut entry = Mapping::new();
        entry.insert("name".into(), name.into());
        entry.insert("file".into(), base.into());
        entry.insert("sha256".into(), digest.into());
        for (key, value) in given {
            if !matches!(key.as_str(), Some("name" | "file" | "sha256")) {
                entry.insert(key.clone(), value.clone());
            }
        }
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(dir: &Path, spec: &str) -> Result<(String, Files), ConfigMapError> {
        let path = dir.join("spec.yaml");
        Spec::new(&path).resolve(spec)
    }

    #[test]
    fn entries_get_base_names_and_pins_and_keep_their_other_keys() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        std::fs::write(dir.path().join("out/gold_policy.wasm"), b"gold").unwrap();
        let spec = "policies:\n- name: gold\n  file: out/gold_policy.wasm\n  config: {a: 1}\n  futureKey: kept\n";
        let (manifest, files) = resolve(dir.path(), spec).unwrap();
        let digest = sha256_hex(b"gold");
        assert_eq!(
            manifest,
            format!(
                "policies:\n- name: gold\n  file: gold_policy.wasm\n  sha256: {digest}\n  config:\n    a: 1\n  futureKey: kept\n"
            )
        );
        assert_eq!(files["gold_policy.wasm"].1, b"gold");
    }

    #[test]
    fn a_wrong_pin_or_a_clash_of_base_names_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (file, bytes) in [("a/p.wasm", "one"), ("b/p.wasm", "two")] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        let pinned = format!(
            "policies:\n- name: p\n  file: a/p.wasm\n  sha256: {}\n",
            "0".repeat(64)
        );
        let error = resolve(dir.path(), &pinned).unwrap_err().to_string();
        assert!(error.contains("policies[0].sha256 is 000"), "{error}");
        let clash = "policies:\n- {name: p, file: a/p.wasm}\n- {name: q, file: b/p.wasm}\n";
        let error = resolve(dir.path(), clash).unwrap_err().to_string();
        assert!(error.contains("would both be p.wasm"), "{error}");
        let nameless = resolve(dir.path(), "policies:\n- {file: a/p.wasm}\n").unwrap_err();
        assert!(
            nameless
                .to_string()
                .ends_with("policies[0].name: is required")
        );
    }

    #[test]
    fn the_size_limit_counts_every_value_and_names_the_largest() {
        let files = Files::from([
            (
                "a.wasm".into(),
                (PathBuf::from("a.wasm"), vec![0; 700 << 10]),
            ),
            (
                "b.wasm".into(),
                (PathBuf::from("b.wasm"), vec![0; 300 << 10]),
            ),
        ]);
        assert!(check_size("x", &files).is_ok());
        let error = check_size(&"x".repeat(30 << 10), &files)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("would hold 1054720 bytes")
                && error.contains(
                    "largest: a.wasm 716800 bytes, b.wasm 307200 bytes, policies.yaml 30720 bytes"
                ),
            "{error}"
        );
    }
}

//! The provider's policy directory (a mounted ConfigMap: `policies.yaml` plus
//! `<name>.wasm` files), loaded into a [`PolicySet`] and reloaded on change.
//!
//! Kubelet updates a mounted ConfigMap by writing a new `..<timestamp>` folder
//! and renaming the `..data` symlink onto it; the visible files are symlinks
//! through `..data`. Watching the directory itself sees that rename.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use super::engine::PolicyEngine;
use super::loader::{self, Policy, PolicySource};
use super::manifest::{MANIFEST_FILE, Manifest, ManifestError, PolicyEntry};
use super::registry::{PolicySet, PolicyState, ProviderPolicy, Registry};

/// Events closer together than this are one change (a swap touches several entries).
const SETTLE: Duration = Duration::from_millis(100);

/// What a load changed.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Policies compiled and swapped in.
    pub loaded: Vec<String>,
    /// Policies refused, with the reason; the previous version (if any) keeps serving.
    pub failed: Vec<(String, String)>,
}

/// Loads the directory's policies. Unchanged policies (same manifest entry, same
/// bytes) are reused from `previous` without recompiling; a policy that fails to
/// load keeps its previous version, or is marked failed when it has none.
pub async fn load(
    engine: &Arc<PolicyEngine>,
    dir: &Path,
    default: Arc<Policy>,
    previous: Option<&PolicySet>,
) -> Result<(PolicySet, LoadReport), ManifestError> {
    let manifest = Manifest::read(dir)?;
    let mut report = LoadReport::default();
    let mut providers = Vec::with_capacity(manifest.policies.len());
    for entry in manifest.policies {
        let earlier = previous.and_then(|set| set.provider(&entry.name));
        providers.push(load_entry(engine, dir, entry, earlier, &mut report).await);
    }
    Ok((PolicySet { default, providers }, report))
}

async fn load_entry(
    engine: &Arc<PolicyEngine>,
    dir: &Path,
    entry: PolicyEntry,
    earlier: Option<&ProviderPolicy>,
    report: &mut LoadReport,
) -> ProviderPolicy {
    let ready_earlier = earlier.and_then(|p| match &p.state {
        PolicyState::Ready(policy) => Some((p, policy)),
        PolicyState::Failed(_) => None,
    });
    if let Some((p, policy)) = ready_earlier
        && p.entry == entry
    {
        // The pin covers the bytes: same entry means same component.
        return ProviderPolicy {
            entry,
            state: PolicyState::Ready(policy.clone()),
        };
    }
    let path = dir.join(entry.file_name());
    let loaded = match std::fs::read(&path) {
        Ok(bytes) => {
            let source = PolicySource {
                name: &entry.name,
                bytes: &bytes,
                pin: Some(&entry.sha256),
                config: entry.config_json(),
                limits: entry.limits(),
            };
            loader::load(engine, source)
                .await
                .map_err(|e| e.to_string())
        }
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    };
    match (loaded, ready_earlier) {
        (Ok(policy), _) => {
            report.loaded.push(entry.name.clone());
            ProviderPolicy {
                entry,
                state: PolicyState::Ready(Arc::new(policy)),
            }
        }
        (Err(reason), Some((p, policy))) => {
            report.failed.push((entry.name.clone(), reason));
            ProviderPolicy {
                entry: p.entry.clone(),
                state: PolicyState::Ready(policy.clone()),
            }
        }
        (Err(reason), None) => {
            report.failed.push((entry.name.clone(), reason.clone()));
            ProviderPolicy {
                entry,
                state: PolicyState::Failed(Arc::from(reason)),
            }
        }
    }
}

/// Reloads the registry whenever the directory changes, until dropped.
pub struct DirectoryWatcher {
    _watcher: notify::RecommendedWatcher,
}

/// Starts watching `dir`; each change reloads it into `registry`.
pub fn watch(
    engine: Arc<PolicyEngine>,
    dir: PathBuf,
    registry: Arc<Registry>,
) -> notify::Result<DirectoryWatcher> {
    let (changed, changes) = mpsc::channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok() {
            // The receiver is gone only when the watcher is being dropped.
            let _ = changed.send(());
        }
    })?;
    watcher.watch(&dir, RecursiveMode::NonRecursive)?;
    thread::Builder::new()
        .name("policy-reload".into())
        .spawn(move || {
            while changes.recv().is_ok() {
                while changes.recv_timeout(SETTLE).is_ok() {}
                engine.block_on(reload(&engine, &dir, &registry));
            }
        })?;
    Ok(DirectoryWatcher { _watcher: watcher })
}

async fn reload(engine: &Arc<PolicyEngine>, dir: &Path, registry: &Registry) {
    let current = registry.current();
    match load(engine, dir, current.default.clone(), Some(&current)).await {
        Ok((set, report)) => {
            let loaded = set
                .providers
                .iter()
                .filter(|p| report.loaded.contains(&p.entry.name));
            for provider in loaded {
                if let PolicyState::Ready(policy) = &provider.state {
                    let contract = policy.contract().version();
                    tracing::info!(policy = %policy.name(), contract, dir = %dir.display(), "policy loaded");
                }
            }
            registry.replace(set);
            for (name, reason) in &report.failed {
                tracing::error!(policy = %name, %reason, "policy refused; the previous version keeps serving");
            }
            registry.note_reload(report.failed);
        }
        Err(e) => {
            tracing::error!(error = %e, "policy manifest refused; the previous policies keep serving");
            registry.note_reload(vec![(MANIFEST_FILE.to_string(), e.to_string())]);
        }
    }
}

//! The provider's policy directory (a mounted ConfigMap: `policies.yaml` plus
//! `<name>.wasm` files), loaded into a [`PolicySet`] and reloaded on change.
//! Entries that name an `image` are pulled from their registry
//! ([`ImageSource`]); a reload in which a pull failed is tried again after
//! [`PULL_RETRY`], whether or not the directory changes.
//!
//! Kubelet updates a mounted ConfigMap by writing a new `..<timestamp>` folder
//! and renaming the `..data` symlink onto it; the visible files are symlinks
//! through `..data`. Watching the directory itself sees that rename.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};

use super::builtin::DEFAULT_POLICY_NAME;
use super::engine::PolicyEngine;
use super::loader::{self, Policy, PolicySource};
use super::manifest::{DefaultEntry, MANIFEST_FILE, Manifest, ManifestError, PolicyEntry};
use super::oci::pull::Pulled;
use super::oci::{ComponentSource, ImageSource};
use super::registry::{PolicySet, PolicyState, ProviderPolicy, Registry};

/// Events closer together than this are one change (a swap touches several entries).
const SETTLE: Duration = Duration::from_millis(100);
/// How soon a reload in which an image pull failed is tried again.
pub const PULL_RETRY: Duration = Duration::from_secs(30);

/// What a load changed.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Policies compiled and swapped in.
    pub loaded: Vec<String>,
    /// Policies refused, with the reason; the previous version (if any) keeps serving.
    pub failed: Vec<(String, String)>,
    /// The policies among `failed` whose image could not be pulled.
    pub pulls_failed: Vec<String>,
}

/// Loads the directory's policies, pulling images anonymously with no cache
/// beyond this load: for tools and tests; the CCM uses [`load_with_images`].
pub async fn load(
    engine: &Arc<PolicyEngine>,
    dir: &Path,
    default: Arc<Policy>,
    previous: Option<&PolicySet>,
) -> Result<(PolicySet, LoadReport), ManifestError> {
    load_with_images(engine, dir, &ImageSource::default(), default, previous).await
}

/// Loads the directory's policies. Unchanged policies (same manifest entry, same
/// bytes) are reused from `previous` without recompiling; a policy that fails to
/// load keeps its previous version, or is marked failed when it has none.
/// `images` keeps only the components the manifest still names.
pub async fn load_with_images(
    engine: &Arc<PolicyEngine>,
    dir: &Path,
    images: &ImageSource,
    default: Arc<Policy>,
    previous: Option<&PolicySet>,
) -> Result<(PolicySet, LoadReport), ManifestError> {
    let manifest = Manifest::read(dir)?;
    let mut report = LoadReport::default();
    let builtin = default;
    let default = load_default(
        engine,
        dir,
        &builtin,
        manifest.default.as_ref(),
        previous,
        &mut report,
    )
    .await?;
    let mut providers = Vec::with_capacity(manifest.policies.len());
    for entry in manifest.policies {
        let earlier = previous.and_then(|set| set.provider(&entry.name));
        providers.push(load_entry(engine, dir, images, entry, earlier, &mut report).await);
    }
    let in_use: Vec<String> = providers
        .iter()
        .filter_map(|p| match p.entry.source() {
            Ok(ComponentSource::Image { reference, .. }) => reference.digest,
            _ => None,
        })
        .collect();
    images.retain(&in_use);
    Ok((
        PolicySet {
            default,
            builtin,
            providers,
        },
        report,
    ))
}

/// The built-in policy with the `default` entry's settings over the cloud
/// config's; the previous one when they are unchanged. Settings the policy
/// refuses refuse the first load (nothing would say which settings serve);
/// on a reload the previous ones keep serving, reported under `default`.
async fn load_default(
    engine: &Arc<PolicyEngine>,
    dir: &Path,
    builtin: &Arc<Policy>,
    entry: Option<&DefaultEntry>,
    previous: Option<&PolicySet>,
    report: &mut LoadReport,
) -> Result<Arc<Policy>, ManifestError> {
    let Some(entry) = entry else {
        return Ok(builtin.clone());
    };
    let (config, limits) = (entry.config_over(&builtin.config), entry.limits());
    let serving = previous.map_or(builtin, |set| &set.default);
    if serving.config == config && serving.limits == limits {
        return Ok(serving.clone());
    }
    match (loader::load_default(engine, config, limits).await, previous) {
        (Ok(policy), _) => {
            report.loaded.push(DEFAULT_POLICY_NAME.to_string());
            Ok(Arc::new(policy))
        }
        (Err(e), None) => Err(ManifestError::Invalid {
            file: dir.join(MANIFEST_FILE),
            path: "default.config".into(),
            message: e.to_string(),
        }),
        (Err(e), Some(_)) => {
            report
                .failed
                .push((DEFAULT_POLICY_NAME.to_string(), e.to_string()));
            Ok(serving.clone())
        }
    }
}

/// A component's bytes: read from the directory, or held by the image cache.
enum Bytes {
    Read(Vec<u8>),
    Pulled(Arc<Pulled>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Read(bytes) => bytes,
            Bytes::Pulled(pulled) => &pulled.component,
        }
    }
}

/// Why an entry's component could not be had.
struct Unavailable {
    reason: String,
    pull_failed: bool,
}

/// The entry's component bytes and pin: read from the directory, or pulled.
async fn component(
    dir: &Path,
    images: &ImageSource,
    entry: &PolicyEntry,
) -> Result<(Bytes, String), Unavailable> {
    let source = entry.source().map_err(|(field, problem)| Unavailable {
        reason: format!("{field}: {problem}"),
        pull_failed: false,
    })?;
    match source {
        ComponentSource::File { name, sha256 } => {
            let path = dir.join(name);
            match std::fs::read(&path) {
                Ok(bytes) => Ok((Bytes::Read(bytes), sha256)),
                Err(e) => Err(Unavailable {
                    reason: format!("cannot read {}: {e}", path.display()),
                    pull_failed: false,
                }),
            }
        }
        ComponentSource::Image {
            reference,
            pull_secret,
        } => match images.component(&reference, pull_secret.as_deref()).await {
            Ok(pulled) => {
                let pin = pulled.component_sha256.clone();
                Ok((Bytes::Pulled(pulled), pin))
            }
            Err(e) => Err(Unavailable {
                reason: e.to_string(),
                pull_failed: true,
            }),
        },
    }
}

async fn load_entry(
    engine: &Arc<PolicyEngine>,
    dir: &Path,
    images: &ImageSource,
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
    let loaded = match component(dir, images, &entry).await {
        Ok((bytes, pin)) => {
            let source = PolicySource {
                name: &entry.name,
                bytes: bytes.as_slice(),
                pin: Some(&pin),
                config: entry.config_json(),
                limits: entry.limits(),
            };
            loader::load(engine, source)
                .await
                .map_err(|e| e.to_string())
        }
        Err(unavailable) => {
            if unavailable.pull_failed {
                report.pulls_failed.push(entry.name.clone());
            }
            Err(unavailable.reason)
        }
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

/// Starts watching `dir`; each change reloads it into `registry`, pulling
/// images anonymously.
pub fn watch(
    engine: Arc<PolicyEngine>,
    dir: PathBuf,
    registry: Arc<Registry>,
) -> notify::Result<DirectoryWatcher> {
    watch_with_images(engine, dir, registry, Arc::default(), false)
}

/// Starts watching `dir`; each change reloads it into `registry` with
/// `images`. With `pulls_failed` (the first load's pull failures), the
/// first reload comes after [`PULL_RETRY`] even if nothing changes.
pub fn watch_with_images(
    engine: Arc<PolicyEngine>,
    dir: PathBuf,
    registry: Arc<Registry>,
    images: Arc<ImageSource>,
    pulls_failed: bool,
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
            let mut retry = pulls_failed;
            loop {
                let next = if retry {
                    changes.recv_timeout(PULL_RETRY)
                } else {
                    changes.recv().map_err(|_| RecvTimeoutError::Disconnected)
                };
                if next == Err(RecvTimeoutError::Disconnected) {
                    return;
                }
                while changes.recv_timeout(SETTLE).is_ok() {}
                retry = engine.block_on(reload(&engine, &dir, &images, &registry));
            }
        })?;
    Ok(DirectoryWatcher { _watcher: watcher })
}

/// Reloads once; true when an image pull failed, to be tried again.
async fn reload(
    engine: &Arc<PolicyEngine>,
    dir: &Path,
    images: &ImageSource,
    registry: &Registry,
) -> bool {
    let current = registry.current();
    let loaded = load_with_images(engine, dir, images, current.builtin.clone(), Some(&current));
    match loaded.await {
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
            registry.note_pull_failures(report.pulls_failed.len());
            registry.note_reload(report.failed);
            !report.pulls_failed.is_empty()
        }
        Err(e) => {
            tracing::error!(error = %e, "policy manifest refused; the previous policies keep serving");
            registry.note_reload(vec![(MANIFEST_FILE.to_string(), e.to_string())]);
            false
        }
    }
}

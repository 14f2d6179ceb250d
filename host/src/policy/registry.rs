//! Which policy governs which Service, swapped atomically on reload.

use std::sync::{Arc, Mutex, RwLock};

use super::builtin::DEFAULT_POLICY_NAME;
use super::capture::CaptureStore;
use super::loader::Policy;
use super::manifest::PolicyEntry;
use super::model::{Namespace, Service};
use super::shadow::ShadowFeed;

/// The Service annotation that names a policy (one whose selector sets `allowAnnotation`).
pub const POLICY_ANNOTATION: &str = "vcd-ccm.io/policy";

/// A provider policy and its state.
pub struct ProviderPolicy {
    /// The manifest entry the served version was loaded from.
    pub entry: PolicyEntry,
    /// Whether it serves decisions.
    pub state: PolicyState,
}

/// Whether a provider policy can serve decisions.
pub enum PolicyState {
    /// Loaded and serving.
    Ready(Arc<Policy>),
    /// Never loaded successfully; the Services it governs get this reason as an error.
    Failed(Arc<str>),
}

/// One consistent view: the built-in default plus the provider's policies in manifest order.
pub struct PolicySet {
    /// The built-in `default` policy, for Services no provider policy
    /// governs, with the settings of `policies.yaml`'s `default` entry.
    pub default: Arc<Policy>,
    /// The built-in policy as the cloud config alone sets it, which a
    /// `default` entry's settings go over at each load.
    pub builtin: Arc<Policy>,
    /// The provider's policies, in manifest order: the first that governs a Service wins.
    pub providers: Vec<ProviderPolicy>,
}

/// Why no policy can decide for a Service.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SelectError {
    /// The annotation names a policy the manifest does not list.
    #[error("annotation {POLICY_ANNOTATION} names policy {0:?}, which is not installed")]
    UnknownPolicy(String),
    /// The annotation names a policy whose selector does not set `allowAnnotation`.
    #[error(
        "annotation {POLICY_ANNOTATION} names policy {0:?}, which Services may not choose by annotation"
    )]
    NotSelectable(String),
    /// The policy that governs the Service never loaded.
    #[error("policy {name} governs this Service but is not available: {reason}")]
    Unavailable {
        /// The policy's name.
        name: String,
        /// Why it failed to load.
        reason: String,
    },
}

impl ProviderPolicy {
    fn governs(&self, service: &Service, namespace: &Namespace, named: Option<&str>) -> bool {
        let selector = &self.entry.selector;
        let by_rules = (selector.namespace_selector.is_some()
            || selector.load_balancer_class.is_some())
            && selector
                .namespace_selector
                .as_ref()
                .is_none_or(|s| s.matches(&namespace.labels))
            && selector
                .load_balancer_class
                .as_ref()
                .is_none_or(|c| service.load_balancer_class.as_ref() == Some(c));
        let by_name = selector.allow_annotation && named == Some(self.entry.name.as_str());
        by_rules || by_name
    }

    fn serving(&self) -> Result<Arc<Policy>, SelectError> {
        match &self.state {
            PolicyState::Ready(policy) => Ok(policy.clone()),
            PolicyState::Failed(reason) => Err(SelectError::Unavailable {
                name: self.entry.name.clone(),
                reason: reason.to_string(),
            }),
        }
    }
}

impl PolicySet {
    /// A set with no provider policies: every Service gets `default`.
    pub fn only_default(default: Arc<Policy>) -> PolicySet {
        PolicySet {
            builtin: default.clone(),
            default,
            providers: Vec::new(),
        }
    }

    /// The first provider policy that governs the Service (by its selector, or by
    /// the annotation naming it), else the default. An annotation naming a policy
    /// that cannot be chosen is an error rather than a silent fallback.
    pub fn select(
        &self,
        service: &Service,
        namespace: &Namespace,
    ) -> Result<Arc<Policy>, SelectError> {
        let named = service
            .annotations
            .iter()
            .find(|(k, _)| k == POLICY_ANNOTATION)
            .map(|(_, v)| v.trim());
        if let Some(provider) = self
            .providers
            .iter()
            .find(|p| p.governs(service, namespace, named))
        {
            return provider.serving();
        }
        match named {
            None | Some(DEFAULT_POLICY_NAME) => Ok(self.default.clone()),
            Some(name) if self.providers.iter().any(|p| p.entry.name == name) => {
                Err(SelectError::NotSelectable(name.to_string()))
            }
            Some(name) => Err(SelectError::UnknownPolicy(name.to_string())),
        }
    }

    /// The shadows of the policy named `active` that loaded, in manifest order.
    pub fn shadows_of(&self, active: &str) -> Vec<Arc<Policy>> {
        self.providers
            .iter()
            .filter(|p| p.entry.shadowed() == Some(active))
            .filter_map(|p| match &p.state {
                PolicyState::Ready(policy) => Some(policy.clone()),
                PolicyState::Failed(_) => None,
            })
            .collect()
    }

    /// The provider policy named `name`, if the manifest lists it.
    pub fn provider(&self, name: &str) -> Option<&ProviderPolicy> {
        self.providers.iter().find(|p| p.entry.name == name)
    }
}

/// What reloads have done so far, for logs, metrics and Events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReloadStatus {
    /// Reloads attempted after the first load.
    pub reloads: u64,
    /// Policies (or the manifest) refused over all reloads.
    pub refusals: u64,
    /// The refusals of the latest reload: (policy or file, reason).
    pub last_refusals: Vec<(String, String)>,
    /// Image pulls that failed over all loads, the first included.
    pub pull_failures: u64,
}

/// The policy set in force. Readers take a snapshot; a reload replaces it whole.
pub struct Registry {
    current: RwLock<Arc<PolicySet>>,
    status: Mutex<ReloadStatus>,
    /// The number of reloads so far, for those who act on each one.
    reloaded: tokio::sync::watch::Sender<u64>,
    /// Where shadow policies' differences go.
    shadows: ShadowFeed,
    /// Decisions kept for Services that ask for it.
    captures: CaptureStore,
}

impl Registry {
    /// A registry serving `set`, with no reloads yet.
    pub fn new(set: PolicySet) -> Registry {
        Registry {
            current: RwLock::new(Arc::new(set)),
            status: Mutex::new(ReloadStatus::default()),
            reloaded: tokio::sync::watch::Sender::new(0),
            shadows: ShadowFeed::default(),
            captures: CaptureStore::default(),
        }
    }

    /// Shadow policies' differences and their counter.
    pub fn shadows(&self) -> &ShadowFeed {
        &self.shadows
    }

    /// Captured decisions of the Services that ask for it.
    pub fn captures(&self) -> &CaptureStore {
        &self.captures
    }

    /// Changes after every reload (once its set is in force and its
    /// refusals are in [`Registry::status`]).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.reloaded.subscribe()
    }

    /// What reloads have done so far.
    pub fn status(&self) -> ReloadStatus {
        self.status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Records `count` image pulls that failed, before the load's
    /// [`Registry::note_reload`] (or at the first load, which has none).
    pub fn note_pull_failures(&self, count: usize) {
        self.status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pull_failures += count as u64;
    }

    /// Records one reload and what it refused.
    pub fn note_reload(&self, refusals: Vec<(String, String)>) {
        let mut status = self
            .status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        status.reloads += 1;
        status.refusals += refusals.len() as u64;
        status.last_refusals = refusals;
        let reloads = status.reloads;
        drop(status);
        self.reloaded.send_replace(reloads);
    }

    /// A snapshot of the set in force; later reloads do not change it.
    pub fn current(&self) -> Arc<PolicySet> {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Puts `set` in force: later [`Registry::current`] calls return it.
    pub fn replace(&self, set: PolicySet) {
        *self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(set);
    }
}

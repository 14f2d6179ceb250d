//! The object store: every kind's objects as JSON, one global revision counter,
//! and a bounded change history that watches replay from; reads (get, list
//! with selectors and paging, watch subscriptions) are here, writes and
//! deletes beside it.

mod delete;
mod update_rules;
mod write;

pub use delete::{DeleteOptions, DeleteOutcome};
pub use write::Written;

use crate::error::{ApiError, ObjectRef};
use crate::object::{self, ObjectKey};
use crate::resources::ResourceType;
use crate::selectors::{FieldSelector, LabelSelector};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::broadcast;

/// What happened to an object, as a watch reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One committed change, in storage form.
#[derive(Debug)]
pub struct Change {
    pub revision: u64,
    pub bucket: &'static str,
    pub kind: ChangeKind,
    pub object: Value,
    /// The state before a modification, so selector watches can see objects
    /// entering or leaving their selection.
    pub previous: Option<Value>,
}

/// How many changes a watch can resume across before it gets 410 Gone.
pub const DEFAULT_HISTORY: usize = 10_000;
/// Live watchers further behind than this are disconnected (and resume).
const LIVE_BUFFER: usize = 4096;

struct State {
    revision: u64,
    buckets: HashMap<&'static str, BTreeMap<ObjectKey, Value>>,
    history: VecDeque<Arc<Change>>,
    history_limit: usize,
    /// Watches may resume from any revision at or after this one.
    oldest_resumable: u64,
}

impl State {
    fn bucket(&self, bucket: &'static str) -> Option<&BTreeMap<ObjectKey, Value>> {
        self.buckets.get(bucket)
    }

    fn bucket_mut(&mut self, bucket: &'static str) -> &mut BTreeMap<ObjectKey, Value> {
        self.buckets.entry(bucket).or_default()
    }

    fn next_revision(&mut self) -> u64 {
        self.revision += 1;
        self.revision
    }
}

/// The in-memory object store shared by the HTTP layer and the library API.
pub struct Store {
    state: Mutex<State>,
    changes: broadcast::Sender<Arc<Change>>,
}

impl Default for Store {
    fn default() -> Self {
        Self::new(DEFAULT_HISTORY)
    }
}

/// Builds the error reference for an object of `resource`.
pub fn object_ref(resource: &ResourceType, name: &str) -> ObjectRef {
    ObjectRef {
        group: resource.group.to_string(),
        kind: resource.kind.to_string(),
        resource: resource.plural.to_string(),
        name: name.to_string(),
    }
}

/// The served form of a stored object: converted, with apiVersion and kind set.
pub fn to_wire(resource: &ResourceType, stored: &Value) -> Value {
    let mut wire = resource.rules.to_wire(stored.clone());
    if let Some(map) = wire.as_object_mut() {
        map.insert("apiVersion".into(), json!(resource.api_version()));
        map.insert("kind".into(), json!(resource.kind));
    }
    wire
}

fn key(resource: &ResourceType, namespace: Option<&str>, name: &str) -> ObjectKey {
    let namespace = if resource.namespaced {
        namespace.unwrap_or_default()
    } else {
        ""
    };
    (namespace.to_string(), name.to_string())
}

impl Store {
    pub fn new(history_limit: usize) -> Self {
        let (changes, _) = broadcast::channel(LIVE_BUFFER);
        Self {
            state: Mutex::new(State {
                revision: 1,
                buckets: HashMap::new(),
                history: VecDeque::new(),
                history_limit: history_limit.max(1),
                oldest_resumable: 1,
            }),
            changes,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves consistent data (writes commit last).
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The newest revision.
    pub fn revision(&self) -> u64 {
        self.lock().revision
    }

    /// Forgets the change history, so every earlier revision is too old to watch from.
    pub fn compact(&self) {
        let mut state = self.lock();
        state.history.clear();
        state.oldest_resumable = state.revision;
    }

    /// Records and broadcasts a change; the object already carries `revision`.
    fn publish(&self, state: &mut State, change: Change) {
        let change = Arc::new(change);
        state.history.push_back(Arc::clone(&change));
        while state.history.len() > state.history_limit {
            if let Some(dropped) = state.history.pop_front() {
                state.oldest_resumable = dropped.revision;
            }
        }
        // No receivers is fine: nobody is watching.
        let _ = self.changes.send(change);
    }

    /// The stored object, in served form.
    pub fn get(
        &self,
        resource: &'static ResourceType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let state = self.lock();
        state
            .bucket(resource.bucket)
            .and_then(|objects| objects.get(&key(resource, namespace, name)))
            .map(|stored| to_wire(resource, stored))
            .ok_or_else(|| ApiError::NotFound(object_ref(resource, name)))
    }
}

fn set_revision(object: &mut Value, revision: u64) {
    object::metadata_mut(object).insert("resourceVersion".into(), json!(revision.to_string()));
}

/// Which objects a list or watch selects.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `None` lists every namespace.
    pub namespace: Option<String>,
    pub labels: LabelSelector,
    pub fields: FieldSelector,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
}

impl ListOptions {
    /// Whether an object in served form is selected.
    pub fn selects(&self, wire: &Value) -> bool {
        let namespace_ok = self
            .namespace
            .as_deref()
            .is_none_or(|ns| object::namespace(wire) == Some(ns));
        namespace_ok && self.labels.matches(wire) && self.fields.matches(wire)
    }
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchStart {
    /// Synthetic ADDED events for every current object, then live changes.
    Snapshot,
    /// Only changes after this revision.
    After(u64),
}

/// What a new watch sends first, and the live feed after it.
pub struct Subscription {
    /// Stored objects to send as synthetic ADDED events.
    pub initial: Vec<Value>,
    /// Past changes to replay, oldest first.
    pub replay: Vec<Arc<Change>>,
    pub live: broadcast::Receiver<Arc<Change>>,
    /// The revision the initial state and replay reach.
    pub revision: u64,
}

/// Continue tokens carry the key to resume after: `namespace/name`.
fn parse_continue(token: &str) -> Result<(String, String), ApiError> {
    token
        .split_once('/')
        .map(|(ns, name)| (ns.to_string(), name.to_string()))
        .ok_or_else(|| ApiError::BadRequest(format!("invalid continue token \"{token}\"")))
}

impl Store {
    /// A `{Kind}List` of the selected objects, in served form.
    pub fn list(
        &self,
        resource: &'static ResourceType,
        options: &ListOptions,
    ) -> Result<Value, ApiError> {
        let after = options
            .continue_token
            .as_deref()
            .map(parse_continue)
            .transpose()?;
        let state = self.lock();
        let mut items = Vec::new();
        let mut next = None;
        let objects = state.bucket(resource.bucket).into_iter().flatten();
        for (key, stored) in objects {
            if after.as_ref().is_some_and(|after| key <= after) {
                continue;
            }
            let wire = to_wire(resource, stored);
            if !options.selects(&wire) {
                continue;
            }
            if options
                .limit
                .is_some_and(|limit| limit > 0 && items.len() == limit)
            {
                next = items.last().map(|last: &Value| {
                    format!(
                        "{}/{}",
                        object::namespace(last).unwrap_or_default(),
                        object::name(last)
                    )
                });
                break;
            }
            items.push(wire);
        }
        let mut metadata = json!({"resourceVersion": state.revision.to_string()});
        if let Some(token) = next {
            metadata["continue"] = json!(token);
        }
        Ok(json!({
            "kind": format!("{}List", resource.kind),
            "apiVersion": resource.api_version(),
            "metadata": metadata,
            "items": items,
        }))
    }

    /// Starts a watch; fails with 410 Gone when `start` is older than the history.
    pub fn subscribe(
        &self,
        resource: &'static ResourceType,
        start: WatchStart,
    ) -> Result<Subscription, ApiError> {
        let state = self.lock();
        // Subscribing under the lock means no change falls between replay and live.
        let live = self.changes.subscribe();
        let (initial, replay) = match start {
            WatchStart::Snapshot => {
                let objects = state.bucket(resource.bucket).into_iter().flatten();
                (objects.map(|(_, v)| v.clone()).collect(), Vec::new())
            }
            WatchStart::After(revision) => {
                if revision < state.oldest_resumable {
                    return Err(ApiError::Expired {
                        requested: revision,
                        oldest: state.oldest_resumable,
                    });
                }
                let replay = state
                    .history
                    .iter()
                    .filter(|c| c.revision > revision && c.bucket == resource.bucket)
                    .cloned()
                    .collect();
                (Vec::new(), replay)
            }
        };
        Ok(Subscription {
            initial,
            replay,
            live,
            revision: state.revision,
        })
    }
}

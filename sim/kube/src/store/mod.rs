//! The object store: every kind's objects as JSON, one global revision counter,
//! and a bounded change history that watches replay from.

mod delete;
mod read;
mod update_rules;
mod write;

pub use delete::{DeleteOptions, DeleteOutcome};
pub use read::{ListOptions, Subscription, WatchStart};
pub use write::Written;

use crate::error::{ApiError, ObjectRef};
use crate::object::{self, ObjectKey};
use crate::resources::ResourceType;
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

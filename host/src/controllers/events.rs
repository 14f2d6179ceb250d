//! core/v1 Events as client-go's `record.EventRecorder` writes them: named
//! `<object>.<hex nanoseconds>`, `source.component` set, identical events
//! within ten minutes folded into one whose `count` grows.
//!
//! Messages come from typed errors that never carry secrets. Whatever their
//! source, they are escaped and cut to [`EVENT_MESSAGE_BYTES`] here, so an
//! Event is never refused for its size and never spans lines.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::text::{EVENT_MESSAGE_BYTES, sanitize};

/// How long an identical event is folded into the previous one.
const FOLD_WINDOW: Duration = Duration::from_secs(600);
/// Folding state kept per recorder; the oldest entries go first.
const FOLD_CAPACITY: usize = 4096;

/// The `type` of an Event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Progress worth knowing.
    Normal,
    /// Something the user should act on.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

#[derive(Hash, PartialEq, Eq, Clone)]
struct FoldKey {
    object: String,
    kind: EventType,
    reason: String,
    message: String,
}

struct Folded {
    namespace: String,
    name: String,
    count: i32,
    last: Instant,
}

/// Publishes Events for one controller (`source.component`).
#[derive(Clone)]
pub struct EventRecorder {
    client: Client,
    component: String,
    host: String,
    folded: Arc<Mutex<HashMap<FoldKey, Folded>>>,
}

impl EventRecorder {
    /// A recorder that reports as `component` running on `host`.
    pub fn new(client: Client, component: &str, host: &str) -> Self {
        Self {
            client,
            component: component.to_string(),
            host: host.to_string(),
            folded: Arc::default(),
        }
    }

    /// The `source.component` of its Events.
    pub fn component(&self) -> &str {
        &self.component
    }

    /// Records one event about `object`. Failures are logged, never
    /// returned: an Event is a report, not part of the reconcile.
    pub async fn publish(
        &self,
        object: &ObjectReference,
        kind: EventType,
        reason: &str,
        message: &str,
    ) {
        let key = FoldKey {
            object: object.uid.clone().unwrap_or_default()
                + object.name.as_deref().unwrap_or_default(),
            kind,
            reason: reason.to_string(),
            message: sanitize(message, EVENT_MESSAGE_BYTES),
        };
        let result = match self.fold(&key) {
            Some((namespace, name, count)) => self.bump(&namespace, &name, count).await,
            None => self.create(object, &key).await,
        };
        if let Err(error) = result {
            tracing::warn!(reason, %error, object = ?object.name, "could not record an Event");
        }
    }

    /// The existing event to bump and its new count, if one is recent.
    fn fold(&self, key: &FoldKey) -> Option<(String, String, i32)> {
        let mut folded = self.folded.lock().unwrap_or_else(|p| p.into_inner());
        let entry = folded.get_mut(key)?;
        if entry.last.elapsed() > FOLD_WINDOW {
            folded.remove(key);
            return None;
        }
        entry.count += 1;
        entry.last = Instant::now();
        Some((entry.namespace.clone(), entry.name.clone(), entry.count))
    }

    async fn bump(&self, namespace: &str, name: &str, count: i32) -> Result<(), kube::Error> {
        let api: Api<Event> = Api::namespaced(self.client.clone(), namespace);
        let patch = json!({"count": count, "lastTimestamp": Time(jiff::Timestamp::now())});
        api.patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .map(drop)
    }

    async fn create(&self, object: &ObjectReference, key: &FoldKey) -> Result<(), kube::Error> {
        let namespace = object
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_string());
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let name = format!("{}.{nanos:x}", object.name.as_deref().unwrap_or("unknown"));
        let now = jiff::Timestamp::now();
        let event = Event {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            involved_object: object.clone(),
            reason: Some(key.reason.clone()),
            message: Some(key.message.clone()),
            type_: Some(key.kind.as_str().to_string()),
            source: Some(EventSource {
                component: Some(self.component.clone()),
                host: Some(self.host.clone()),
            }),
            count: Some(1),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            event_time: None::<MicroTime>,
            reporting_component: Some(self.component.clone()),
            reporting_instance: Some(self.host.clone()),
            ..Event::default()
        };
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        api.create(&PostParams::default(), &event).await?;
        self.remember(key.clone(), namespace, name);
        Ok(())
    }

    fn remember(&self, key: FoldKey, namespace: String, name: String) {
        let mut folded = self.folded.lock().unwrap_or_else(|p| p.into_inner());
        if folded.len() >= FOLD_CAPACITY {
            folded.retain(|_, entry| entry.last.elapsed() <= FOLD_WINDOW);
            if folded.len() >= FOLD_CAPACITY {
                folded.clear();
            }
        }
        folded.insert(
            key,
            Folded {
                namespace,
                name,
                count: 1,
                last: Instant::now(),
            },
        );
    }
}

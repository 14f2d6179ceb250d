//! Reads: list with selectors and paging, and watch subscriptions.

use super::{Change, Store, to_wire};
use crate::error::ApiError;
use crate::object;
use crate::resources::ResourceType;
use crate::selectors::{FieldSelector, LabelSelector};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::broadcast;

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

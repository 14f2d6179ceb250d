//! Watch streams: newline-delimited JSON watch events over a chunked response.

use super::AppState;
use super::query::Query;
use crate::error::ApiError;
use crate::faults::Faults;
use crate::printers::{self, TableOptions};
use crate::resources::ResourceType;
use crate::store::{Change, ChangeKind, ListOptions, Subscription, WatchStart, to_wire};
use axum::body::{Body, Bytes};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};

/// What a watch request asked for.
pub struct WatchRequest {
    pub resource: &'static ResourceType,
    pub selection: ListOptions,
    pub start: WatchStart,
    pub bookmarks: bool,
    /// Send a bookmark marking the end of the initial ADDED events.
    pub initial_events_end: bool,
    pub timeout: Option<Duration>,
    /// Send each object as a one-row Table (`kubectl get -w`).
    pub table: Option<TableOptions>,
}

impl WatchRequest {
    pub fn from_query(
        resource: &'static ResourceType,
        selection: ListOptions,
        query: &Query,
        table: Option<TableOptions>,
    ) -> Result<Self, ApiError> {
        let send_initial = query
            .get("sendInitialEvents")
            .map(|v| v == "true" || v == "1");
        let revision = query.get("resourceVersion").filter(|rv| *rv != "0");
        let start = match (revision, send_initial) {
            (_, Some(true)) | (None, None) => WatchStart::Snapshot,
            (Some(rv), _) => WatchStart::After(
                rv.parse()
                    .map_err(|_| ApiError::BadRequest(format!("invalid resource version: {rv}")))?,
            ),
            // Explicitly no initial events and no revision: start at the newest state.
            (None, Some(false)) => WatchStart::After(u64::MAX),
        };
        Ok(Self {
            resource,
            selection,
            start,
            bookmarks: query.flag("allowWatchBookmarks"),
            initial_events_end: send_initial == Some(true),
            timeout: query.number("timeoutSeconds")?.map(Duration::from_secs),
            table,
        })
    }
}

fn event_line(kind: &str, object: &Value) -> Result<Bytes, std::io::Error> {
    let mut line = serde_json::to_vec(&json!({"type": kind, "object": object}))?;
    line.push(b'\n');
    Ok(Bytes::from(line))
}

/// Serves a watch. A too-old start revision yields one ERROR event, as the real
/// server's watch cache does, rather than an HTTP error.
pub fn serve(app: &AppState, mut request: WatchRequest) -> Response {
    if request.start == WatchStart::After(u64::MAX) {
        request.start = WatchStart::After(app.store.revision());
    }
    let (sender, receiver) = mpsc::channel::<Result<Bytes, std::io::Error>>(64);
    match app.store.subscribe(request.resource, request.start) {
        Ok(subscription) => {
            let drops = app.faults.watch_drops();
            let faults = app.faults.clone();
            let bookmark_every = app.bookmark_interval;
            tokio::spawn(async move {
                let last_revision = match request.start {
                    WatchStart::Snapshot => subscription.revision,
                    WatchStart::After(revision) => revision,
                };
                let stream = WatchStream {
                    request,
                    sender,
                    last_revision,
                    columns_sent: false,
                    faults,
                };
                stream.run(subscription, drops, bookmark_every).await;
            });
        }
        Err(error) => {
            let line = event_line("ERROR", &error.to_status());
            tokio::spawn(async move {
                // The client may already be gone; nothing to do then.
                let _ = sender.send(line).await;
            });
        }
    }
    let body = futures::stream::unfold(receiver, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(body),
    )
        .into_response()
}

struct WatchStream {
    request: WatchRequest,
    sender: mpsc::Sender<Result<Bytes, std::io::Error>>,
    /// The newest revision this stream has accounted for, sent or filtered out.
    last_revision: u64,
    /// Whether a Table with column definitions went out; later Tables leave them out.
    columns_sent: bool,
    faults: Faults,
}

/// The client closed the connection.
struct ClientGone;

impl WatchStream {
    async fn send(&self, kind: &str, object: &Value) -> Result<(), ClientGone> {
        let line = event_line(kind, object);
        self.sender.send(line).await.map_err(|_| ClientGone)
    }

    /// Sends an object change, as a Table when the client asked for one. Bookmarks
    /// and errors stay plain objects.
    async fn send_object(&mut self, kind: &str, object: &Value) -> Result<(), ClientGone> {
        let Some(options) = self.request.table else {
            return self.send(kind, object).await;
        };
        let now = jiff::Timestamp::now();
        let with_columns = !self.columns_sent;
        self.columns_sent = true;
        let table =
            printers::object_table(self.request.resource, object, options, with_columns, now);
        self.send(kind, &table).await
    }

    async fn bookmark(&self, initial_end: bool) -> Result<(), ClientGone> {
        let mut metadata = json!({"resourceVersion": self.last_revision.to_string()});
        if initial_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object = json!({
            "kind": self.request.resource.kind,
            "apiVersion": self.request.resource.api_version(),
            "metadata": metadata,
        });
        self.send("BOOKMARK", &object).await
    }

    async fn run(
        mut self,
        subscription: Subscription,
        mut drops: tokio::sync::watch::Receiver<u64>,
        bookmark_every: Duration,
    ) {
        drops.mark_unchanged();
        let Subscription {
            initial,
            replay,
            mut live,
            ..
        } = subscription;
        if self.send_start(initial, replay).await.is_err() {
            return;
        }
        let deadline = self
            .request
            .timeout
            .map(|t| tokio::time::Instant::now() + t);
        let mut ticker = tokio::time::interval(bookmark_every);
        ticker.reset();
        loop {
            tokio::select! {
                // Faults first, so a drop requested before a change is never overtaken by it.
                biased;
                _ = drops.changed() => {
                    // An error item makes the server reset the connection mid-stream.
                    let _ = self.sender.send(Err(std::io::Error::other("kubesim: watch dropped"))).await;
                    return;
                }
                received = live.recv() => match received {
                    Ok(change) => {
                        self.lag(&change).await;
                        if self.forward(&change).await.is_err() {
                            return;
                        }
                    }
                    // A watcher this far behind is cut off; it resumes from its last revision.
                    Err(broadcast::error::RecvError::Lagged(_) | broadcast::error::RecvError::Closed) => return,
                },
                _ = ticker.tick(), if self.request.bookmarks => {
                    if self.bookmark(false).await.is_err() {
                        return;
                    }
                }
                _ = sleep_until(deadline) => return,
                _ = self.sender.closed() => return,
            }
        }
    }

    async fn send_start(
        &mut self,
        initial: Vec<Value>,
        replay: Vec<Arc<Change>>,
    ) -> Result<(), ClientGone> {
        for stored in &initial {
            let wire = to_wire(self.request.resource, stored);
            if self.request.selection.selects(&wire) {
                self.send_object("ADDED", &wire).await?;
            }
        }
        if self.request.initial_events_end && self.request.bookmarks {
            self.bookmark(true).await?;
        }
        for change in &replay {
            self.forward(change).await?;
        }
        Ok(())
    }

    /// Holds a live change back as long as the lag fault on its resource says.
    async fn lag(&self, change: &Change) {
        if change.bucket == self.request.resource.bucket {
            let lag = self.faults.watch_lag(self.request.resource.plural);
            if !lag.is_zero() {
                tokio::time::sleep(lag).await;
            }
        }
    }

    /// Sends a change as this watch's selection sees it: objects moving into the
    /// selection arrive as ADDED, objects moving out as DELETED.
    async fn forward(&mut self, change: &Change) -> Result<(), ClientGone> {
        if change.revision <= self.last_revision {
            return Ok(());
        }
        self.last_revision = change.revision;
        if change.bucket != self.request.resource.bucket {
            return Ok(());
        }
        let resource = self.request.resource;
        let now = to_wire(resource, &change.object);
        let selected_now = self.request.selection.selects(&now);
        let selected_before = change
            .previous
            .as_ref()
            .is_some_and(|p| self.request.selection.selects(&to_wire(resource, p)));
        let kind = match (change.kind, selected_before, selected_now) {
            (ChangeKind::Added, _, true) => ChangeKind::Added,
            (ChangeKind::Modified, true, true) => ChangeKind::Modified,
            (ChangeKind::Modified, false, true) => ChangeKind::Added,
            (ChangeKind::Modified, true, false) => ChangeKind::Deleted,
            (ChangeKind::Deleted, _, true) => ChangeKind::Deleted,
            _ => return Ok(()),
        };
        self.send_object(kind.as_str(), &now).await
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

//! Shared helpers: a running server, typed fixtures, bounded waits.

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Service;
use kube::Client;
use kubesim::KubeSim;
use serde_json::{Value, json};
use std::time::Duration;

/// Upper bound for anything a test waits on.
pub const WAIT: Duration = Duration::from_secs(10);

pub async fn start() -> (KubeSim, Client) {
    let sim = KubeSim::start().await.expect("kubesim starts");
    let client = sim.client().expect("client builds");
    (sim, client)
}

pub fn typed<K: serde::de::DeserializeOwned>(value: Value) -> K {
    serde_json::from_value(value).expect("fixture deserializes")
}

pub fn service(name: &str, kind: &str) -> Service {
    typed(json!({
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"type": kind, "selector": {"app": name}, "ports": [{"name": "http", "port": 80}]},
    }))
}

/// The collection's resourceVersion now: a watch from it sees only what follows.
pub async fn list_version<K>(api: &kube::Api<K>) -> String
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.list(&kube::api::ListParams::default())
        .await
        .expect("the list answers")
        .metadata
        .resource_version
        .expect("lists carry a resourceVersion")
}

/// The next item of a stream, failing the test if none comes in time.
pub async fn next<S: Stream + Unpin>(stream: &mut S) -> S::Item {
    tokio::time::timeout(WAIT, stream.next())
        .await
        .expect("stream item within the deadline")
        .expect("stream still open")
}

/// The (code, reason) of the API error a request failed with.
pub fn api_error<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (u16, String) {
    match result {
        Err(kube::Error::Api(status)) => (status.code, status.reason.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

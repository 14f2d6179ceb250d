//! A pass-through proxy in front of kubesim that records the requests of one
//! client. The manager talks to kubesim through it, the test directly, so
//! the record holds the manager's calls and nothing the test itself sends
//! (creating namespaces, marking nodes NotReady, editing Services).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use kubesim::RequestRecord;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

#[derive(Clone)]
struct Upstream {
    base: String,
    client: reqwest::Client,
    record: Arc<Mutex<Vec<RequestRecord>>>,
}

pub struct RecordingProxy {
    url: String,
    record: Arc<Mutex<Vec<RequestRecord>>>,
    server: JoinHandle<()>,
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl RecordingProxy {
    /// Listens on a free loopback port and forwards everything to `upstream`.
    pub async fn start(upstream: &str) -> RecordingProxy {
        let record = Arc::new(Mutex::new(Vec::new()));
        let state = Upstream {
            base: upstream.trim_end_matches('/').to_string(),
            client: reqwest::Client::new(),
            record: record.clone(),
        };
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the proxy binds");
        let url = format!("http://{}", listener.local_addr().expect("a bound address"));
        let app = Router::new().fallback(forward).with_state(state);
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("the proxy serves");
        });
        RecordingProxy {
            url,
            record,
            server,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The requests forwarded so far, oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.record
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Forwards one request and streams the answer back as it arrives, so
/// watches keep working.
async fn forward(State(upstream): State<Upstream>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut outgoing = upstream
        .client
        .request(parts.method.clone(), format!("{}{target}", upstream.base))
        .body(body.clone());
    let body_sent = body;
    for (name, value) in &parts.headers {
        if name != header::HOST {
            outgoing = outgoing.header(name, value);
        }
    }
    let answer = match outgoing.send().await {
        Ok(answer) => answer,
        Err(error) => return (StatusCode::BAD_GATEWAY, error.to_string()).into_response(),
    };
    upstream
        .record
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(RequestRecord {
            method: parts.method.to_string(),
            path: parts.uri.path().to_string(),
            query: parts.uri.query().unwrap_or_default().to_string(),
            status: answer.status().as_u16(),
            body: serde_json::from_slice(&body_sent).unwrap_or_default(),
        });
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        // The body is re-framed on this side.
        if name != header::TRANSFER_ENCODING && name != header::CONTENT_LENGTH {
            response = response.header(name, value);
        }
    }
    let chunks = futures::stream::unfold(answer, |mut answer| async move {
        match answer.chunk().await {
            Ok(Some(chunk)) => Some((Ok::<_, reqwest::Error>(chunk), answer)),
            Ok(None) | Err(_) => None,
        }
    });
    response
        .body(Body::from_stream(chunks))
        .unwrap_or_else(|error| (StatusCode::BAD_GATEWAY, error.to_string()).into_response())
}

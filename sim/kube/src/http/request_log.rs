//! A log of the requests the server answered, for tests that count API calls.

use std::sync::{Arc, Mutex};

/// One answered request.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    pub query: String,
    /// The response status (for a watch, the status the stream started with).
    pub status: u16,
    /// A write's body as JSON (null for reads and bodies that are not JSON),
    /// so a test can compare what a client wrote.
    pub body: serde_json::Value,
}

/// Shared, append-only until cleared.
#[derive(Clone, Default)]
pub struct RequestLog(Arc<Mutex<Vec<RequestRecord>>>);

impl RequestLog {
    pub fn push(&self, record: RequestRecord) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record);
    }

    pub fn snapshot(&self) -> Vec<RequestRecord> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn clear(&self) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

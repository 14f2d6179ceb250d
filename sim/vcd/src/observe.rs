//! The request log (JSON lines) and per-endpoint call counters. Counters
//! are keyed `METHOD template`, e.g. `GET /cloudapi/1.0.0/edgeGateways/{id}`.
//! Admin calls under `/_sim/` are neither logged nor counted.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    pub time: String,
    pub request_id: String,
    pub method: String,
    /// Path and query as sent.
    pub path: String,
    /// The route template, or the path when no route matched.
    pub template: String,
    /// The API version the request was served as.
    pub api_version: String,
    pub status: u16,
    /// JSON when the body parses as JSON, else a string; null when empty.
    pub request_body: Value,
    pub response_body: Value,
}

impl LogEntry {
    pub fn counter_key(&self) -> String {
        format!("{} {}", self.method, self.template)
    }
}

#[derive(Debug, Default)]
pub struct RequestLog {
    pub entries: Vec<LogEntry>,
    pub counters: BTreeMap<String, u64>,
    /// Also append each entry to this file.
    pub sink: Option<File>,
}

impl RequestLog {
    pub fn record(&mut self, entry: LogEntry) {
        *self.counters.entry(entry.counter_key()).or_default() += 1;
        if let Some(file) = &mut self.sink {
            let line = serde_json::to_string(&entry).unwrap_or_default();
            if let Err(error) = writeln!(file, "{line}") {
                tracing::warn!(%error, "cannot write the request log file");
            }
        }
        self.entries.push(entry);
    }

    pub fn jsonl(&self) -> String {
        self.entries
            .iter()
            .map(|e| serde_json::to_string(e).unwrap_or_default() + "\n")
            .collect()
    }

    pub fn reset(&mut self) {
        self.entries.clear();
        self.counters.clear();
    }
}

/// A body for the log: JSON if it parses, else text, null when empty.
pub fn body_value(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

//! Asynchronous tasks as the legacy `/api/task/{id}` endpoint shows them.

use serde::{Deserialize, Serialize};

use super::Ref;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TaskStatus {
    Queued,
    Running,
    Success,
    Error,
}

impl TaskStatus {
    pub fn label(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Success => "success",
            Self::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskError {
    pub status: u16,
    pub minor: String,
    pub message: String,
}

/// The object a task works on; `href` is the CloudAPI path of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskOwner {
    pub id: String,
    pub name: String,
    pub href_path: String,
    pub media_type: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    /// E.g. `createLoadBalancerPool`; also the key of per-operation durations.
    pub operation_name: String,
    pub operation: String,
    pub status: TaskStatus,
    pub org: Ref,
    pub user: Ref,
    pub owner: TaskOwner,
    pub error: Option<TaskError>,
    /// `Result/ResultContent`: a JSON string (IP Space allocations).
    pub result: Option<String>,
    pub start_time: String,
    pub end_time: Option<String>,
}

//! A VCD task as read back: its status, the object it works on, its error
//! and result. Waiting for one is the client's (`tasks.rs`).

use serde::Deserialize;

use super::errors::{CallSite, VcdError};
use super::reference::EntityRef;

/// Why a task failed, in VCD's words.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskError {
    /// VCD's minor error code, e.g. `BAD_REQUEST`.
    #[serde(default)]
    pub minor_error_code: String,
    /// VCD's message.
    #[serde(default)]
    pub message: String,
}

/// What a finished task hands back.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskResult {
    /// The result as text; for an IP Space allocation, a JSON list of the
    /// allocated IPs.
    pub result_content: Option<String>,
}

/// The fields of a task we act on.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Task {
    /// The task's URN, `urn:vcloud:task:<uuid>`.
    pub id: String,
    /// `queued`, `preRunning`, `running`, `success`, `error` or `aborted`.
    pub status: String,
    /// The object the task works on; after a create, the new object.
    pub owner: Option<EntityRef>,
    /// Why the task failed; set when `status` is `error`.
    pub error: Option<TaskError>,
    /// The task's result, if it has one.
    pub result: Option<TaskResult>,
}

impl Task {
    pub(crate) fn finished(&self) -> bool {
        matches!(self.status.as_str(), "success" | "error" | "aborted")
    }

    /// The id of the object the task created or changed.
    /// The id of the object a create made, from the create's answer: VCD
    /// answers creates with a task naming the new object.
    pub fn created_id(task: Option<Task>, call: &CallSite, what: &str) -> Result<String, VcdError> {
        let task = task.ok_or_else(|| VcdError::Unexpected {
            call: call.clone(),
            detail: format!("VCD created the {what} without a task"),
        })?;
        task.owner_id(call).map(str::to_string)
    }

    /// The id of the object the task works on; an error when the task names
    /// none.
    pub fn owner_id(&self, call: &CallSite) -> Result<&str, VcdError> {
        self.owner
            .as_ref()
            .map(|o| o.id.as_str())
            .ok_or_else(|| VcdError::Unexpected {
                call: call.clone(),
                detail: format!("task {} names no owner object", self.id),
            })
    }
}

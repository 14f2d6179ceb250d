//! VCD tasks: a 202 names a task in `Location`; we poll it until it ends or
//! the deadline passes, around the end that tasks of the same operation
//! took recently (`task_timing.rs`), or at once and then with a backoff
//! while nothing is known. A failed task becomes an error carrying the
//! task's own message.

use std::time::Instant;

use serde::Deserialize;

use super::client::{ApiRequest, VcdClient};
use super::errors::{CallSite, VcdError, vcd_text};
use super::resources::EntityRef;
use super::task_timing::PollSchedule;

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
    fn finished(&self) -> bool {
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

/// The path and query of a task URL: VCD's `Location` may name a host the
/// client does not reach it by (a proxy), so only the path is used.
fn task_path(location: &str) -> String {
    match reqwest::Url::parse(location) {
        Ok(url) => match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        },
        Err(_) => location.to_string(),
    }
}

impl VcdClient {
    /// Polls the task at `location` until it ends; `call` is the write
    /// that started it, for errors.
    pub(crate) async fn wait_task(
        &self,
        call: &CallSite,
        location: &str,
    ) -> Result<Task, VcdError> {
        let policy = self.config().tasks;
        let started = Instant::now();
        let timings = self.task_timings();
        let mut schedule = PollSchedule::new(&policy, timings.expected(call.operation()));
        let request = ApiRequest::get("get_task", task_path(location)).legacy();
        let mut wait = schedule.next_wait();
        let outcome = loop {
            tokio::time::sleep(wait).await;
            let sent = started.elapsed();
            let task: Task = self.fetch(request.clone()).await?;
            if task.finished() {
                timings.observe(call.operation(), sent);
                break Ok(task);
            }
            wait = schedule.next_wait();
            if started.elapsed() + wait > policy.deadline {
                break Err(VcdError::TaskTimeout {
                    call: call.clone(),
                    task: task.id,
                    status: task.status,
                    waited: started.elapsed(),
                });
            }
        };
        let task = match outcome {
            Ok(task) if task.status == "success" => Ok(task),
            Ok(task) => {
                let error = task.error.clone().unwrap_or(TaskError {
                    minor_error_code: task.status.to_uppercase(),
                    message: format!("the task ended with status {}", task.status),
                });
                Err(VcdError::TaskFailed {
                    call: call.clone(),
                    task: task.id,
                    minor: vcd_text(&error.minor_error_code),
                    message: vcd_text(&error.message),
                })
            }
            Err(error) => Err(error),
        };
        let label = match &task {
            Ok(_) => "ok",
            Err(error) => error.outcome(),
        };
        self.metrics()
            .task_wait(call.operation(), label, started.elapsed());
        task
    }
}

#[cfg(test)]
mod tests {
    use super::task_path;

    #[test]
    fn only_the_path_of_a_location_is_used() {
        assert_eq!(
            task_path("https://vcd.example:443/api/task/abc"),
            "/api/task/abc"
        );
        assert_eq!(task_path("/api/task/abc"), "/api/task/abc");
    }
}

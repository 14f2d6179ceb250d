//! Writes and VCD's tasks: a write VCD answers with 202 names a task in
//! `Location`; we poll it until it ends or
//! the deadline passes, around the end that tasks of the same operation
//! took recently (`task_timing.rs`), or at once and then with a backoff
//! while nothing is known. A failed task becomes an error carrying the
//! task's own message.

use std::time::Instant;

use reqwest::StatusCode;

use super::client::{ApiRequest, VcdClient};
use super::errors::{CallSite, VcdError, vcd_text};
use super::task::{Task, TaskError};
use super::task_timing::PollSchedule;

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

/// Sends a write; when VCD answers 202, waits for the task it names.
/// `None` means VCD finished synchronously.
pub(in crate::vcd) async fn write(
    client: &VcdClient,
    request: ApiRequest,
) -> Result<Option<Task>, VcdError> {
    let reply = client.execute(&request).await?;
    if reply.status != StatusCode::ACCEPTED {
        return Ok(None);
    }
    let call = client.call_site(&request).1;
    let location = reply
        .header("location")
        .ok_or_else(|| VcdError::Unexpected {
            call: call.clone(),
            detail: "202 Accepted without a Location header".to_string(),
        })?;
    wait_task(client, &call, location).await.map(Some)
}

/// Polls the task at `location` until it ends; `call` is the write
/// that started it, for errors.
async fn wait_task(client: &VcdClient, call: &CallSite, location: &str) -> Result<Task, VcdError> {
    let policy = client.config().tasks;
    let started = Instant::now();
    let timings = client.task_timings();
    let mut schedule = PollSchedule::new(&policy, timings.expected(call.operation()));
    let request = ApiRequest::get("get_task", task_path(location)).legacy();
    let mut wait = schedule.next_wait();
    let outcome = loop {
        tokio::time::sleep(wait).await;
        let sent = started.elapsed();
        let task: Task = client.fetch(request.clone()).await?;
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
    client
        .metrics()
        .task_wait(call.operation(), label, started.elapsed());
    task
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

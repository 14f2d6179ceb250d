//! A failpoint for the tests of task supervision through the real binary,
//! compiled only with the `fault-injection` feature (the integration tests
//! turn it on; release builds and the image never have it): no real input
//! makes a controller task die, so `VCD_CCM_FAIL_TASK=<controller>/<task>`
//! makes that supervised task panic as it starts, each time it is started,
//! and `<controller>/<task>:<n>` only at its first `n` starts, after which
//! it runs as usual. The supervisor's own backoff sets the pace.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The environment variable naming the task that fails.
pub const VARIABLE: &str = "VCD_CCM_FAIL_TASK";

#[derive(Debug, PartialEq)]
struct Failpoint {
    controller: String,
    task: String,
    /// `None`: every start fails.
    starts: Option<usize>,
}

impl Failpoint {
    fn parse(value: &str) -> Result<Failpoint, String> {
        let (name, starts) = match value.split_once(':') {
            Some((name, count)) => {
                let count = count
                    .parse()
                    .map_err(|_| format!("{count:?} is not a number of starts"))?;
                (name, Some(count))
            }
            None => (value, None),
        };
        match name.split_once('/') {
            Some((controller, task)) if !controller.is_empty() && !task.is_empty() => {
                Ok(Failpoint {
                    controller: controller.to_string(),
                    task: task.to_string(),
                    starts,
                })
            }
            _ => Err(format!("{name:?} is not <controller>/<task>")),
        }
    }

    fn names(&self, controller: &str, task: &str) -> bool {
        self.controller == controller && self.task == task
    }
}

/// The failpoint the environment sets, read once; the number of starts
/// failed so far.
fn failpoint() -> &'static (Option<Failpoint>, AtomicUsize) {
    static FAILPOINT: OnceLock<(Option<Failpoint>, AtomicUsize)> = OnceLock::new();
    FAILPOINT.get_or_init(|| {
        let failpoint = std::env::var(VARIABLE).ok().map(|value| {
            Failpoint::parse(&value).unwrap_or_else(|error| panic!("{VARIABLE}: {error}"))
        });
        (failpoint, AtomicUsize::new(0))
    })
}

/// `run`, or a panic in its place when the failpoint names this task and
/// has starts left to fail.
pub fn injected<F>(controller: &'static str, task: &'static str, run: F) -> impl Future<Output = ()>
where
    F: Future<Output = ()>,
{
    let (failpoint, failed) = failpoint();
    let fails = failpoint.as_ref().is_some_and(|failpoint| {
        failpoint.names(controller, task)
            && failed.fetch_add(1, Ordering::SeqCst) < failpoint.starts.unwrap_or(usize::MAX)
    });
    async move {
        if fails {
            panic!("{VARIABLE} makes {controller}/{task} panic as it starts");
        }
        run.await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_names_a_task_and_how_many_of_its_starts_fail() {
        assert_eq!(
            Failpoint::parse("service/worker"),
            Ok(Failpoint {
                controller: "service".into(),
                task: "worker".into(),
                starts: None,
            })
        );
        assert_eq!(
            Failpoint::parse("service/drift-repair:3").map(|f| f.starts),
            Ok(Some(3))
        );
        assert!(Failpoint::parse("worker").is_err());
        assert!(Failpoint::parse("service/").is_err());
        assert!(Failpoint::parse("service/worker:many").is_err());
    }
}

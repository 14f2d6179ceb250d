//! Supervision of a controller's long-running tasks (workers, sync loops):
//! a task that ends or panics is started again after a backoff, counted in
//! `vcd_ccm_controller_task_restarts_total`, and `/healthz` fails while
//! tasks keep dying, so the kubelet restarts a process that cannot hold
//! itself together instead of leaving a leader that does nothing.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

// The tests' way to make a task die through the real binary.
#[cfg(feature = "fault-injection")]
mod failpoint;

/// More restarts than this within [`WINDOW`] fail `/healthz`.
const MAX_RESTARTS: usize = 5;
const WINDOW: Duration = Duration::from_secs(300);
/// The wait before a restart: doubling from the first to the last.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TaskLabels {
    controller: &'static str,
    task: &'static str,
}

/// The restarts of every supervised task of the process.
#[derive(Clone, Debug, Default)]
pub struct TaskHealth {
    restarts: Arc<Mutex<VecDeque<(Instant, String)>>>,
    counted: Family<TaskLabels, Counter>,
    /// A whole controller that stopped: nothing restarts it in-process.
    stopped: Arc<Mutex<Option<String>>>,
}

impl TaskHealth {
    /// Registers `vcd_ccm_controller_task_restarts_total`.
    pub fn register(registry: &mut Registry) -> Self {
        let health = Self::default();
        registry.register(
            "vcd_ccm_controller_task_restarts",
            "Controller tasks (workers, sync loops) that ended or panicked and were started again",
            health.counted.clone(),
        );
        health
    }

    /// The `/healthz` check: failing while more than [`MAX_RESTARTS`] tasks
    /// were restarted in the last [`WINDOW`].
    pub fn check(&self) -> Result<(), String> {
        if let Some(stopped) = &*self.stopped.lock().unwrap_or_else(|p| p.into_inner()) {
            return Err(stopped.clone());
        }
        let mut restarts = self.restarts.lock().unwrap_or_else(|p| p.into_inner());
        while restarts
            .front()
            .is_some_and(|(at, _)| at.elapsed() > WINDOW)
        {
            restarts.pop_front();
        }
        match restarts.back() {
            Some((_, last)) if restarts.len() > MAX_RESTARTS => Err(format!(
                "{} controller task restarts in the last {} s (last: {last})",
                restarts.len(),
                WINDOW.as_secs()
            )),
            _ => Ok(()),
        }
    }

    /// A controller's run ended, which only a process restart undoes:
    /// `/healthz` fails from now on.
    pub fn controller_stopped(&self, how: String) {
        tracing::error!(%how, "a controller stopped; /healthz fails so the process is restarted");
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = Some(how);
    }

    fn note(&self, controller: &'static str, task: &'static str, how: &str) {
        self.counted
            .get_or_create(&TaskLabels { controller, task })
            .inc();
        let mut restarts = self.restarts.lock().unwrap_or_else(|p| p.into_inner());
        restarts.push_back((Instant::now(), format!("{controller}/{task} {how}")));
        if restarts.len() > 4 * MAX_RESTARTS {
            restarts.pop_front();
        }
    }

    /// Runs the task `make` builds, and again after a backoff whenever it
    /// ends or panics; returns only when cancelled.
    pub async fn supervise<F, Fut>(self, controller: &'static str, task: &'static str, make: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        // Exported at 0 from the start, so a first restart is an increase.
        drop(self.counted.get_or_create(&TaskLabels { controller, task }));
        let mut backoff = FIRST_BACKOFF;
        loop {
            let started = Instant::now();
            let run = make();
            #[cfg(feature = "fault-injection")]
            let run = failpoint::injected(controller, task, run);
            let how = match tokio::spawn(run).await {
                Ok(()) => "ended".to_string(),
                Err(error) if error.is_panic() => "panicked".to_string(),
                Err(_) => return,
            };
            tracing::error!(controller, task, how = %how, restart_in = ?backoff, "a controller task stopped; starting it again");
            self.note(controller, task, &how);
            // A task that ran a good while before dying starts the backoff over.
            if started.elapsed() > MAX_BACKOFF {
                backoff = FIRST_BACKOFF;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(start_paused = true)]
    async fn a_task_that_keeps_panicking_is_restarted_with_backoff_and_fails_health() {
        let health = TaskHealth::default();
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = runs.clone();
        let supervisor = tokio::spawn(health.clone().supervise("service", "worker", move || {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                panic!("a bug");
            }
        }));
        // Restarts after 1, 2, 4, 8, 16 s: six runs within 31 s.
        tokio::time::sleep(Duration::from_millis(31_500)).await;
        assert_eq!(runs.load(Ordering::SeqCst), 6);
        let failing = health.check().unwrap_err();
        assert!(failing.contains("service/worker panicked"), "{failing}");
        supervisor.abort();
        tokio::time::sleep(WINDOW + Duration::from_secs(1)).await;
        assert!(health.check().is_ok(), "old restarts age out");
    }

    #[tokio::test(start_paused = true)]
    async fn a_few_restarts_keep_the_process_healthy() {
        let health = TaskHealth::default();
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = runs.clone();
        let supervisor = tokio::spawn(health.clone().supervise("service", "drift", move || {
            let counter = counter.clone();
            async move {
                if counter.fetch_add(1, Ordering::SeqCst) < 2 {
                    return;
                }
                std::future::pending::<()>().await;
            }
        }));
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert_eq!(
            runs.load(Ordering::SeqCst),
            3,
            "started again twice, then runs"
        );
        assert!(health.check().is_ok());
        supervisor.abort();
    }
}

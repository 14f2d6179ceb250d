//! How long each kind of task usually takes, learnt from the tasks this
//! client waited for, so a poll lands near a task's end instead of up to a
//! whole backoff step after it (on a real VCD, where ALB tasks take
//! seconds, a doubling backoff wastes up to its cap on every write, and the
//! gateway lock is held meanwhile).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use super::config::TaskPolicy;

/// How many recent durations per operation the median is taken over.
const SAMPLES: usize = 9;
/// The first poll goes out this share of the expected duration in, so a
/// task that got faster is noticed and the expectation follows it down.
const LEAD: f64 = 0.95;
/// Past the expected end, polls start this share of it apart, and double.
const STEP: f64 = 0.05;
/// Without an expectation, the polls of the first second go out at the
/// policy's first delay (100 ms) before the steps start doubling: most
/// tasks end within a second.
const FLAT_POLLS: u32 = 9;
/// The shortest step between polls near the expected end.
const MIN_STEP: Duration = Duration::from_millis(20);

/// Recent task durations per operation (`create_pool`, …).
#[derive(Debug, Default)]
pub(super) struct TaskTimings {
    samples: Mutex<HashMap<&'static str, VecDeque<Duration>>>,
}

impl TaskTimings {
    fn samples(&self) -> std::sync::MutexGuard<'_, HashMap<&'static str, VecDeque<Duration>>> {
        self.samples
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The median of the operation's recent durations; before it has
    /// any, that of every operation's (tasks of one VCD take similar
    /// times); `None` before any task was seen.
    pub fn expected(&self, operation: &str) -> Option<Duration> {
        let samples = self.samples();
        let mut sorted: Vec<Duration> = match samples.get(operation) {
            Some(recent) => recent.iter().copied().collect(),
            None => samples.values().flatten().copied().collect(),
        };
        sorted.sort();
        sorted.get(sorted.len() / 2).copied()
    }

    /// Notes that a task of `operation` was seen finished `took` after its
    /// write was answered (when the poll that saw it went out).
    pub fn observe(&self, operation: &'static str, took: Duration) {
        let mut samples = self.samples();
        let recent = samples.entry(operation).or_default();
        if recent.len() == SAMPLES {
            recent.pop_front();
        }
        recent.push_back(took);
    }
}

/// When the polls of one task go out.
#[derive(Debug)]
pub(super) struct PollSchedule {
    next: Duration,
    step: Duration,
    max: Duration,
    /// Polls left before the step starts doubling.
    flat: u32,
}

impl PollSchedule {
    /// Without an expectation: at once, then at the policy's first delay
    /// for a while, then doubling. With one: just before the expected end,
    /// then at short steps that double.
    pub fn new(policy: &TaskPolicy, expected: Option<Duration>) -> Self {
        match expected {
            None => Self {
                next: Duration::ZERO,
                step: policy.first_poll_delay,
                max: policy.max_poll_delay,
                flat: FLAT_POLLS,
            },
            Some(expected) => Self {
                next: expected.mul_f64(LEAD).min(policy.max_poll_delay),
                step: expected
                    .mul_f64(STEP)
                    .clamp(MIN_STEP, policy.max_poll_delay),
                max: policy.max_poll_delay,
                flat: 0,
            },
        }
    }

    /// How long to wait before the next poll; each call moves on.
    pub fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = self.step;
        match self.flat {
            0 => self.step = (self.step * 2).min(self.max),
            _ => self.flat -= 1,
        }
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    #[test]
    fn the_expectation_is_the_median_of_recent_durations() {
        let timings = TaskTimings::default();
        assert_eq!(timings.expected("create_pool"), None);
        for took in [500, 480, 3000, 510, 490] {
            timings.observe("create_pool", ms(took));
        }
        assert_eq!(timings.expected("create_pool"), Some(ms(500)));
        assert_eq!(
            timings.expected("update_pool"),
            Some(ms(500)),
            "an unseen operation starts from every operation's median"
        );
        assert_eq!(TaskTimings::default().expected("update_pool"), None);
        for _ in 0..SAMPLES {
            timings.observe("create_pool", ms(100));
        }
        assert_eq!(timings.expected("create_pool"), Some(ms(100)));
    }

    #[test]
    fn polls_go_out_just_before_the_expected_end_then_close_together() {
        let policy = TaskPolicy::default();
        let mut learnt = PollSchedule::new(&policy, Some(ms(500)));
        let waits: Vec<u128> = (0..4).map(|_| learnt.next_wait().as_millis()).collect();
        assert_eq!(waits, [475, 25, 50, 100]);
        let mut fresh = PollSchedule::new(&policy, None);
        let waits: Vec<u128> = (0..13).map(|_| fresh.next_wait().as_millis()).collect();
        assert_eq!(
            waits,
            [
                0, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 200, 400
            ]
        );
    }

    #[test]
    fn waits_never_exceed_the_cap() {
        let policy = TaskPolicy::default();
        let mut slow = PollSchedule::new(&policy, Some(Duration::from_secs(60)));
        for _ in 0..10 {
            assert!(slow.next_wait() <= policy.max_poll_delay);
        }
    }
}

//! Which failures are worth another attempt, and how long to wait first:
//! jittered exponential backoff. `BUSY_ENTITY` and 429 are rejections that
//! changed nothing, so any request may repeat them. 5xx, resets and timeouts
//! may have taken effect, so only idempotent requests repeat them; writes
//! that are not idempotent check their effect before trying again
//! (see `create::create_checked`).

use std::future::Future;
use std::time::Duration;

use super::errors::VcdError;
use super::metrics::ClientMetrics;

/// How often, and after what waits, a failed request is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts per request, the first included.
    pub max_attempts: u32,
    /// The wait before the second attempt; doubled each time after.
    pub base_delay: Duration,
    /// The longest wait between two attempts, VCD's `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// About 30 s of waiting over 8 attempts: enough to outlast a gateway
    /// busy with another writer's task, short enough for a reconcile.
    fn default() -> Self {
        Self {
            max_attempts: 8,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `attempt + 1` (`attempt` counts from 1):
    /// between half and all of the exponential step, so concurrent writers
    /// that failed together do not retry together.
    pub fn delay(&self, attempt: u32) -> Duration {
        let exponent = attempt.saturating_sub(1).min(16);
        let step = self
            .base_delay
            .saturating_mul(1 << exponent)
            .min(self.max_delay);
        step.mul_f64(0.5 + fastrand::f64() * 0.5)
    }
}

/// Whether repeating a request can change what VCD did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotency {
    /// GET, PUT of a whole object, DELETE, logins.
    Idempotent,
    /// POST that creates: repeated only after a rejection that changed nothing.
    NotIdempotent,
}

/// The reason label of a retry, or `None` when the error is final.
pub fn retry_reason(error: &VcdError, idempotency: Idempotency) -> Option<&'static str> {
    let safe_anyway = match error {
        VcdError::BusyEntity { .. } => return Some("busy"),
        VcdError::Throttled { .. } => return Some("throttled"),
        VcdError::Server { .. } => Some("server_error"),
        VcdError::Transport { .. } => Some("transport"),
        VcdError::Timeout { .. } => Some("timeout"),
        _ => None,
    };
    safe_anyway.filter(|_| idempotency == Idempotency::Idempotent)
}

/// What to wait before retrying `error`: VCD's `Retry-After` when it sent
/// one, else the policy's backoff.
pub fn wait_before_retry(policy: &RetryPolicy, error: &VcdError, attempt: u32) -> Duration {
    match error {
        VcdError::Throttled {
            retry_after: Some(after),
            ..
        } => (*after).min(policy.max_delay),
        _ => policy.delay(attempt),
    }
}

/// Runs `attempt` until it succeeds, fails for good, or the policy's
/// attempts are spent; each retry is logged and counted.
pub(crate) async fn with_retries<T, F, Fut>(
    policy: &RetryPolicy,
    metrics: &ClientMetrics,
    operation: &'static str,
    idempotency: Idempotency,
    mut attempt: F,
) -> Result<T, VcdError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, VcdError>>,
{
    let mut attempts = 0;
    loop {
        attempts += 1;
        let error = match attempt().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let Some(reason) = retry_reason(&error, idempotency) else {
            return Err(error);
        };
        if attempts >= policy.max_attempts {
            return Err(error);
        }
        let wait = wait_before_retry(policy, &error, attempts);
        metrics.retry(operation, reason);
        tracing::debug!(operation, reason, attempt = attempts, ?wait, %error, "retrying a VCD request");
        tokio::time::sleep(wait).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcd::errors::CallSite;

    #[test]
    fn delays_grow_jittered_and_capped() {
        let policy = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        for _ in 0..50 {
            let first = policy.delay(1);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = policy.delay(3);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            assert!(policy.delay(30) <= Duration::from_millis(1000));
        }
    }

    #[test]
    fn only_rejections_repeat_for_non_idempotent_requests() {
        let call = CallSite::new("x", reqwest::Method::POST, "/x");
        let busy = VcdError::BusyEntity {
            call: call.clone(),
            message: String::new(),
        };
        let server = VcdError::Server {
            call,
            status: 503,
            minor: String::new(),
            message: String::new(),
        };
        assert_eq!(
            retry_reason(&busy, Idempotency::NotIdempotent),
            Some("busy")
        );
        assert_eq!(retry_reason(&server, Idempotency::NotIdempotent), None);
        assert_eq!(
            retry_reason(&server, Idempotency::Idempotent),
            Some("server_error")
        );
    }
}

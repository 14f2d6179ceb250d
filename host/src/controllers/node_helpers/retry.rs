//! What the controllers' conflict retries share: recognising a 409 and
//! client-go's `wait.Jitter(d, 1.0)` (a delay between d and 2d).

use std::time::Duration;

/// Whether the API server refused a write because the object changed.
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.is_conflict())
}

/// `base` plus up to `base` more, at random, so retries of several
/// writers spread out.
pub fn jittered(base: Duration) -> Duration {
    base + base.mul_f64(fastrand::f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_between_one_and_two_times_the_base() {
        let base = Duration::from_millis(50);
        for _ in 0..1000 {
            let delay = jittered(base);
            assert!(delay >= base && delay <= base * 2, "{delay:?}");
        }
    }

    #[test]
    fn only_409_is_a_conflict() {
        let status = |code: u16, reason: &str| {
            kube::Error::Api(Box::new(kube::core::Status {
                code,
                reason: reason.into(),
                ..kube::core::Status::default()
            }))
        };
        assert!(is_conflict(&status(409, "Conflict")));
        assert!(!is_conflict(&status(404, "NotFound")));
        assert!(!is_conflict(&status(500, "InternalError")));
    }
}

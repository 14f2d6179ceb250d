//! Client-side ceilings on request rates, so a burst of reconciles cannot
//! flood a shared VCD or API server: a token bucket (`burst` requests at
//! once, refilled at `per_second`) where each request reserves the moment
//! it may go, as golang.org/x/time/rate's `Reserve` does.

mod layer;

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

pub use layer::{ThrottleLayer, ThrottleMetrics, Throttled};

/// Requests per second, with `burst` allowed at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Sustained rate (client-go's QPS).
    pub per_second: f64,
    /// Requests allowed at once above the rate.
    pub burst: u32,
}

/// A token bucket (client-go's `tokenBucketRateLimiter`): callers reserve a
/// slot and wait for it, in the order they asked.
#[derive(Debug)]
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// Negative when reservations run ahead of the refill.
    tokens: f64,
    updated: Instant,
}

impl RateLimiter {
    /// `None` unless `per_second` is a positive number and `burst` ≥ 1.
    pub fn new(Rate { per_second, burst }: Rate) -> Option<Self> {
        (per_second.is_finite() && per_second > 0.0 && burst >= 1).then(|| Self {
            per_second,
            burst: f64::from(burst),
            bucket: Mutex::new(Bucket {
                tokens: f64::from(burst),
                updated: Instant::now(),
            }),
        })
    }

    /// Takes a token and returns when the request holding it may go.
    pub fn reserve(&self) -> Instant {
        let now = Instant::now();
        let mut bucket = self.bucket.lock().unwrap_or_else(|p| p.into_inner());
        let refill = now.duration_since(bucket.updated).as_secs_f64() * self.per_second;
        bucket.tokens = (bucket.tokens + refill).min(self.burst) - 1.0;
        bucket.updated = now;
        if bucket.tokens >= 0.0 {
            now
        } else {
            now + Duration::from_secs_f64(-bucket.tokens / self.per_second)
        }
    }

    /// Waits for this caller's turn.
    pub async fn wait(&self) {
        tokio::time::sleep_until(self.reserve()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(per_second: f64, burst: u32) -> RateLimiter {
        RateLimiter::new(Rate { per_second, burst }).unwrap()
    }

    /// How long after `start` each of `count` requests may go.
    fn slots(limiter: &RateLimiter, start: Instant, count: usize) -> Vec<u64> {
        (0..count)
            .map(|_| limiter.reserve().duration_since(start).as_millis() as u64)
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_goes_at_once_then_requests_are_spaced() {
        let start = Instant::now();
        let limiter = limiter(10.0, 3);
        assert_eq!(slots(&limiter, start, 5), [0, 0, 0, 100, 200]);
    }

    #[tokio::test(start_paused = true)]
    async fn idle_time_refills_the_bucket_up_to_the_burst() {
        let limiter = limiter(10.0, 2);
        let start = Instant::now();
        assert_eq!(slots(&limiter, start, 2), [0, 0]);
        tokio::time::advance(Duration::from_secs(10)).await;
        let later = Instant::now();
        assert_eq!(slots(&limiter, later, 3), [0, 0, 100]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_one_spaces_every_request() {
        let start = Instant::now();
        let limiter = limiter(50.0, 1);
        assert_eq!(slots(&limiter, start, 4), [0, 20, 40, 60]);
        limiter.wait().await;
        assert_eq!(start.elapsed(), Duration::from_millis(80));
    }

    #[test]
    fn nonsense_rates_are_refused() {
        for (per_second, burst) in [(0.0, 1), (-1.0, 1), (f64::NAN, 1), (5.0, 0)] {
            assert!(
                RateLimiter::new(Rate { per_second, burst }).is_none(),
                "{per_second}/s, burst {burst}"
            );
        }
    }
}

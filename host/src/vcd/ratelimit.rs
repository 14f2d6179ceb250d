//! An optional client-side ceiling on requests per second, so a burst of
//! reconciles cannot flood a shared VCD. Requests reserve evenly spaced
//! slots; a caller sleeps until its slot.

use std::time::{Duration, Instant};

use tokio::sync::Mutex;

#[derive(Debug)]
pub struct RateLimiter {
    interval: Duration,
    next_slot: Mutex<Instant>,
}

impl RateLimiter {
    /// `None` when `per_second` is not a positive number.
    pub fn new(per_second: f64) -> Option<Self> {
        (per_second.is_finite() && per_second > 0.0).then(|| Self {
            interval: Duration::from_secs_f64(1.0 / per_second),
            next_slot: Mutex::new(Instant::now()),
        })
    }

    pub async fn wait(&self) {
        let slot = {
            let mut next = self.next_slot.lock().await;
            let slot = (*next).max(Instant::now());
            *next = slot + self.interval;
            slot
        };
        tokio::time::sleep_until(slot.into()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn spaces_requests_evenly() {
        let limiter = RateLimiter::new(50.0).unwrap();
        let start = Instant::now();
        for _ in 0..6 {
            limiter.wait().await;
        }
        // The first slot is immediate, then five 20 ms gaps.
        assert!(start.elapsed() >= Duration::from_millis(95));
        assert!(RateLimiter::new(0.0).is_none());
    }
}

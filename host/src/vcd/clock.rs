//! How far VCD's clock is from this host's, read from the `Date` header of
//! one unauthenticated `GET /api/versions`. `Date` has whole seconds and
//! VCD stamped it somewhere within the round trip, so the offset is known
//! to within half a second plus half the round trip.

use std::time::{Duration, Instant};

use jiff::{SignedDuration, Timestamp};

use super::{VcdClient, VcdError};

/// VCD's clock against this host's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockOffset {
    /// VCD's time minus this host's: positive when VCD is ahead.
    pub offset: SignedDuration,
    /// How far the true offset may lie from `offset`, either way.
    pub uncertainty: Duration,
}

impl ClockOffset {
    /// The least the clocks can be apart, whichever way.
    pub fn at_least(&self) -> Duration {
        self.offset.unsigned_abs().saturating_sub(self.uncertainty)
    }

    /// Compares VCD's `Date` with this host's clock.
    pub async fn read(client: &VcdClient) -> Result<ClockOffset, VcdError> {
        let sent = Timestamp::now();
        let started = Instant::now();
        let reply = client.versions().await?;
        let round_trip = started.elapsed();
        let unexpected = |detail: String| VcdError::Unexpected {
            call: client.call_of("get_versions", "/api/versions"),
            detail,
        };
        let date = reply
            .header("date")
            .ok_or_else(|| unexpected("the answer has no Date header".to_string()))?;
        let stamped = jiff::fmt::rfc2822::parse(date)
            .map_err(|e| unexpected(format!("the Date header is not an HTTP date: {e}")))?
            .timestamp();
        let half_second = SignedDuration::from_millis(500);
        let half_trip = SignedDuration::try_from(round_trip / 2).unwrap_or(SignedDuration::MAX);
        // The middle of the second VCD stamped, against the middle of the trip.
        let offset = stamped
            .duration_since(sent)
            .saturating_add(half_second)
            .saturating_sub(half_trip);
        Ok(ClockOffset {
            offset,
            uncertainty: Duration::from_millis(500) + round_trip / 2,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_apart_takes_off_the_uncertainty() {
        let behind = ClockOffset {
            offset: SignedDuration::from_secs(-300),
            uncertainty: Duration::from_secs(2),
        };
        assert_eq!(behind.at_least(), Duration::from_secs(298));
        let close = ClockOffset {
            offset: SignedDuration::from_millis(800),
            uncertainty: Duration::from_secs(1),
        };
        assert_eq!(close.at_least(), Duration::ZERO);
    }
}

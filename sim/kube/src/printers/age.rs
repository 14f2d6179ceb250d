//! Ages as the API server prints them (apimachinery `duration.HumanDuration`).

use jiff::{SignedDuration, Timestamp};

/// Printed for a missing or zero timestamp, as `translateTimestampSince` does.
pub const UNKNOWN: &str = "<unknown>";

/// Go's zero time, 0001-01-01T00:00:00Z, which an unset timestamp decodes to.
const GO_ZERO_TIME_SECONDS: i64 = -62_135_596_800;

/// The age of `timestamp` (an RFC 3339 `metav1.Time` or `MicroTime`) at `now`.
pub fn since(timestamp: Option<&str>, now: Timestamp) -> String {
    match timestamp.and_then(|t| t.parse::<Timestamp>().ok()) {
        Some(time) if time.as_second() != GO_ZERO_TIME_SECONDS => {
            human_duration(now.duration_since(time))
        }
        _ => UNKNOWN.to_string(),
    }
}

/// Two or three significant figures: `45s`, `3m2s`, `15m`, `5h10m`, `3d4h`, `2y10d`.
pub fn human_duration(duration: SignedDuration) -> String {
    let seconds = duration.as_secs();
    // Up to a second in the future is clock skew between machines: "now".
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 2 * 60 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_remainder(minutes, "m", seconds % 60, "s");
    }
    if minutes < 3 * 60 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return with_remainder(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_remainder(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return with_remainder(years, "y", days % 365, "d");
    }
    format!("{years}y")
}

/// `3m2s`, or `3m` when the smaller unit is zero.
fn with_remainder(major: i64, major_unit: &str, minor: i64, minor_unit: &str) -> String {
    if minor == 0 {
        format!("{major}{major_unit}")
    } else {
        format!("{major}{major_unit}{minor}{minor_unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn human(seconds: i64) -> String {
        human_duration(SignedDuration::from_secs(seconds))
    }

    #[test]
    fn durations_follow_the_apimachinery_steps() {
        const MINUTE: i64 = 60;
        const HOUR: i64 = 60 * MINUTE;
        const DAY: i64 = 24 * HOUR;
        const YEAR: i64 = 365 * DAY;
        for (seconds, printed) in [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (5, "5s"),
            (119, "119s"),
            (2 * MINUTE, "2m"),
            (3 * MINUTE + 2, "3m2s"),
            (10 * MINUTE + 30, "10m"),
            (179 * MINUTE, "179m"),
            (3 * HOUR, "3h"),
            (5 * HOUR + 10 * MINUTE, "5h10m"),
            (8 * HOUR + 10 * MINUTE, "8h"),
            (47 * HOUR, "47h"),
            (2 * DAY, "2d"),
            (3 * DAY + 4 * HOUR, "3d4h"),
            (8 * DAY + 4 * HOUR, "8d"),
            (729 * DAY, "729d"),
            (2 * YEAR + 10 * DAY, "2y10d"),
            (3 * YEAR, "3y"),
            (9 * YEAR + 100 * DAY, "9y"),
        ] {
            assert_eq!(human(seconds), printed, "{seconds}s");
        }
    }

    #[test]
    fn ages_are_measured_from_rfc3339_timestamps() {
        let now: Timestamp = "2024-05-01T12:00:00Z".parse().unwrap();
        assert_eq!(since(Some("2024-05-01T11:56:58Z"), now), "3m2s");
        assert_eq!(since(Some("2024-05-01T11:59:59.500000Z"), now), "0s");
        assert_eq!(since(None, now), UNKNOWN);
        assert_eq!(since(Some("not a time"), now), UNKNOWN);
        assert_eq!(since(Some("0001-01-01T00:00:00Z"), now), UNKNOWN);
    }
}

//! This host's clock against VCD's.
//!
//! The CCM itself tolerates a skewed clock: token lifetimes are relative
//! (`expires_in`), task deadlines are measured locally. What a clock a
//! minute or more off breaks is around it: TLS certificates are checked
//! against the local clock (a host behind VCD refuses a certificate VCD has
//! just started to use, as not yet valid), Kubernetes Leases and Events are
//! stamped with it, and the times in the cluster RDE's `status.cpi` and in
//! the logs no longer line up with VCD's tasks and events. NTP keeps hosts
//! within milliseconds of each other, so clocks a minute apart mean one
//! side is not synchronised at all.

use std::time::Duration;

use super::findings::{Failure, Step, bounded};
use crate::vcd::VcdClient;
use crate::vcd::clock::ClockOffset;

/// The most the clocks may surely be apart.
pub const MAX_SKEW: Duration = Duration::from_secs(60);

/// `duration` to the nearest second, as `1m 30s`.
fn shown(duration: Duration) -> String {
    let seconds = (duration.as_millis() + 500) / 1000;
    humantime::format_duration(Duration::from_secs(seconds as u64)).to_string()
}

pub(super) async fn check(client: &VcdClient) -> Step<()> {
    let reading = bounded(ClockOffset::read(client)).await?.map_err(|e| {
        Failure::new(
            e,
            "Check that VCD answers GET /api/versions with a Date header",
        )
    })?;
    let apart = reading.offset.unsigned_abs();
    let way = if reading.offset.is_negative() {
        "behind"
    } else {
        "ahead of"
    };
    let margin = format!("±{}ms", reading.uncertainty.as_millis());
    if reading.at_least() > MAX_SKEW {
        return Err(Failure::new(
            format!(
                "VCD's clock is {} {way} this host's ({margin}); more than {} apart",
                shown(apart),
                shown(MAX_SKEW)
            ),
            "Synchronise the clocks of this host and VCD with NTP",
        ));
    }
    Ok((
        (),
        format!(
            "VCD's clock is {}ms {way} this host's ({margin})",
            apart.as_millis()
        ),
    ))
}

//! A failpoint for the test of the `leaderElection` health check through
//! the real binary, compiled only with the `fault-injection` feature (the
//! integration tests turn it on; release builds and the image never have
//! it). A leader whose renewals fail gives up and exits, so only a renewer
//! that is itself stuck (a deadlock, a starved runtime) leaves a process
//! that believes it leads but renews nothing: `VCD_CCM_STALL_RENEWALS=1`
//! makes the renewer wait forever instead of renewing.

use std::sync::OnceLock;

/// The environment variable that stalls the renewer.
pub const VARIABLE: &str = "VCD_CCM_STALL_RENEWALS";

/// Whether the environment stalls the renewer; read once.
pub fn renewals_stalled() -> bool {
    static STALLED: OnceLock<bool> = OnceLock::new();
    *STALLED.get_or_init(|| std::env::var(VARIABLE).is_ok_and(|v| v == "1"))
}

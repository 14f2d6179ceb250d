//! Creates that survive lost answers: a create VCD may have made although
//! its answer never came is looked for before it is sent again.

use std::future::Future;

use super::client::VcdClient;
use super::errors::VcdError;
use super::retry::{Idempotency, retry_reason, wait_before_retry};

/// A create (a non-idempotent POST) that survives 5xx, resets and
/// timeouts: after such a failure it checks with `find_existing`
/// whether the object was made anyway before posting again.
pub(in crate::vcd) async fn create_checked<T, C, CF, F, FF>(
    client: &VcdClient,
    operation: &'static str,
    mut create: C,
    mut find_existing: F,
) -> Result<T, VcdError>
where
    C: FnMut() -> CF,
    CF: Future<Output = Result<T, VcdError>>,
    F: FnMut() -> FF,
    FF: Future<Output = Result<Option<T>, VcdError>>,
{
    let policy = client.config().retry;
    let mut uncertain = false;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let error = match create().await {
            Ok(created) => return Ok(created),
            Err(error) => error,
        };
        let reason = retry_reason(&error, Idempotency::Idempotent);
        let maybe_created =
            reason.is_some() || (uncertain && matches!(error, VcdError::DuplicateName { .. }));
        if !maybe_created || attempt >= policy.max_attempts {
            return Err(error);
        }
        if let Some(existing) = find_existing().await? {
            return Ok(existing);
        }
        uncertain = true;
        let reason = reason.unwrap_or("duplicate");
        client.metrics().retry(operation, reason);
        tracing::debug!(operation, reason, attempt, %error, "the create may have failed; retrying");
        tokio::time::sleep(wait_before_retry(&policy, &error, attempt)).await;
    }
}

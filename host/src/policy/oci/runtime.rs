//! The runtime registry requests run on. Reloads run on the policy
//! engine's timer runtime, which drives no sockets; the command-line tools
//! have no runtime of their own. Spawning there and awaiting the handle
//! works from any of them.

use std::future::Future;
use std::sync::OnceLock;

/// One worker thread with I/O and timers, started at the first request and
/// never dropped.
fn runtime() -> Result<&'static tokio::runtime::Runtime, String> {
    static RUNTIME: OnceLock<std::io::Result<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("policy-registry")
                .enable_all()
                .build()
        })
        .as_ref()
        .map_err(|e| format!("the registry client's runtime cannot start: {e}"))
}

/// Runs `future` on the registry runtime; `Err` when that cannot start.
pub async fn on_registry_runtime<F>(future: F) -> Result<F::Output, String>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match runtime()?.spawn(future).await {
        Ok(output) => Ok(output),
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(error) => Err(format!("the registry request was cancelled: {error}")),
    }
}

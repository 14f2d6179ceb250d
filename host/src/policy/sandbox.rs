//! Per-call store state: an empty WASI context, the memory cap and the guest's
//! bounded log, and the budgets every call runs under.

use rand::SeedableRng;
use rand::rngs::StdRng;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{HostWallClock, WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{
    RequestOptions, WasiBody, WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView,
};

use super::model::LogLevel;
use crate::text::sanitize;

/// Lines a policy may log per call; later ones are dropped and counted.
pub const LOG_LINES_PER_CALL: u32 = 32;
/// The bytes a logged line is cut to, once escaped.
pub const LOG_LINE_BYTES: usize = 1024;
/// What the guest's stdout and stderr (panic messages) may hold per call.
pub const STDIO_BYTES: usize = 16 * 1024;
/// How much of the guest's stdout and stderr an error quotes.
pub const STDIO_QUOTE_BYTES: usize = 512;
/// The most bytes one value may carry from the guest into the host: a
/// decision or decision error (every string and list element counted, each
/// time it is referenced), `describe`'s info, `validate-config`'s message,
/// one log line. Checked by wasmtime before anything is copied.
pub const OUTPUT_BYTES: usize = 64 * 1024;
/// Table elements are charged to the memory cap at this size (a function
/// reference is a pointer).
const TABLE_ELEMENT_BYTES: usize = 8;

/// The largest per-call deadline a policy may be given (`timeoutMs` ≤ 10000).
pub const MAX_TIMEOUT_MS: u64 = 10_000;

/// The largest memory cap a policy may ask for (`memoryLimitMiB` ≤ 1024).
pub const MAX_MEMORY_BYTES: usize = 1 << 30;

/// Limits one call runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    /// The call's deadline (100 ms by default).
    pub timeout: Duration,
    /// The cap on all of the instance's memories and tables together, in
    /// bytes (32 MiB by default).
    pub memory_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_millis(100),
            memory_bytes: 32 << 20,
        }
    }
}

/// What one call used of its budgets, for policy authors (`vcd-ccm policy
/// test`): the figures the CCM would hold against [`Limits`] and
/// [`OUTPUT_BYTES`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallCost {
    /// From the store's creation to the call's end: the span the deadline
    /// covers (instantiation included, the wait for a pool slot not).
    pub time: Duration,
    /// The high-water mark of the instance's memories and tables together,
    /// as the memory cap counts them.
    pub peak_memory_bytes: usize,
    /// The bytes the returned value was charged against [`OUTPUT_BYTES`];
    /// `None` when nothing was returned (the call failed in the sandbox).
    pub output_bytes: Option<usize>,
}

/// The store's data for one call.
pub struct Sandbox {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    deny_http: DenyHttp,
    table: ResourceTable,
    pub(super) memory: MemoryCap,
    log: GuestLog,
    stdio: MemoryOutputPipe,
}

impl Sandbox {
    /// Fresh state for one call of `policy` under `limits`.
    pub(super) fn new(policy: Arc<str>, limits: Limits) -> Sandbox {
        let stdio = MemoryOutputPipe::new(STDIO_BYTES);
        // Nothing to read, nowhere to write but the bounded pipe, no sockets, a
        // wall clock stuck at the epoch and seeded randomness: a decision can
        // depend on its input only.
        let wasi = WasiCtx::builder()
            .stdout(stdio.clone())
            .stderr(stdio.clone())
            .wall_clock(FrozenClock)
            .secure_random(StdRng::seed_from_u64(0))
            .insecure_random(StdRng::seed_from_u64(0))
            .insecure_random_seed(0)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build();
        Sandbox {
            wasi,
            http: WasiHttpCtx::new(),
            deny_http: DenyHttp,
            table: ResourceTable::new(),
            memory: MemoryCap {
                limit_bytes: limits.memory_bytes,
                used_bytes: 0,
                exceeded: false,
            },
            log: GuestLog {
                policy,
                lines_left: LOG_LINES_PER_CALL,
                dropped: 0,
            },
            stdio,
        }
    }

    /// The end of what the guest printed (e.g. a panic message), lossily
    /// decoded and made safe to log.
    pub fn stdio(&self) -> String {
        let contents = self.stdio.contents();
        let tail = &contents[contents.len().saturating_sub(STDIO_QUOTE_BYTES)..];
        sanitize(String::from_utf8_lossy(tail).trim(), STDIO_QUOTE_BYTES)
    }

    /// Writes a guest's `host.log` line to the CCM's log, within the per-call budget.
    pub(super) fn log(&mut self, level: LogLevel, message: &str) {
        self.log.write(level, message);
    }

    /// Reports log lines dropped over the per-call budget.
    pub fn finish(&self) {
        if self.log.dropped > 0 {
            tracing::warn!(policy = %self.log.policy, dropped = self.log.dropped, "policy log lines dropped");
        }
    }
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for Sandbox {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.deny_http,
        }
    }
}

/// `wasi:http` with every request refused before any connection or name
/// lookup: componentize-js components import it for `fetch`, which a policy
/// must not reach.
struct DenyHttp;

impl WasiHttpHooks for DenyHttp {
    fn send_request(
        &mut self,
        _request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _response_done: Box<dyn Future<Output = HttpResult<()>> + Send>,
    ) -> Box<dyn Future<Output = HttpResult<(http::Response<WasiBody>, HttpIo)>> + Send> {
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}

type HttpResult<T> = wasmtime_wasi_http::Result<T>;
/// The connection's I/O future that `send_request` hands back with a response.
type HttpIo = Box<dyn Future<Output = HttpResult<()>> + Send>;

/// One budget for everything the instance allocates: every memory's bytes
/// and every table's elements, from their creation on. Refuses growth past
/// the limit and remembers that it did, so the resulting failure is reported
/// as out-of-memory rather than as a plain trap.
pub struct MemoryCap {
    limit_bytes: usize,
    used_bytes: usize,
    /// Whether a growth was refused.
    pub(super) exceeded: bool,
}

impl MemoryCap {
    /// Bytes charged so far. Memories and tables never shrink, so this is
    /// also the call's high-water mark.
    pub(super) fn used_bytes(&self) -> usize {
        self.used_bytes
    }

    fn grow(&mut self, extra_bytes: usize) -> bool {
        match self.used_bytes.checked_add(extra_bytes) {
            Some(total) if total <= self.limit_bytes => {
                self.used_bytes = total;
                true
            }
            _ => {
                self.exceeded = true;
                false
            }
        }
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(desired.saturating_sub(current)))
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let extra = desired.saturating_sub(current);
        Ok(self.grow(extra.saturating_mul(TABLE_ELEMENT_BYTES)))
    }
}

struct GuestLog {
    policy: Arc<str>,
    lines_left: u32,
    dropped: u32,
}

impl GuestLog {
    fn write(&mut self, level: LogLevel, message: &str) {
        if self.lines_left == 0 {
            self.dropped += 1;
            return;
        }
        self.lines_left -= 1;
        let message = sanitize(message, LOG_LINE_BYTES);
        let policy = &*self.policy;
        match level {
            LogLevel::Trace => tracing::trace!(policy, "{message}"),
            LogLevel::Debug => tracing::debug!(policy, "{message}"),
            LogLevel::Info => tracing::info!(policy, "{message}"),
            LogLevel::Warn => tracing::warn!(policy, "{message}"),
            LogLevel::Error => tracing::error!(policy, "{message}"),
        }
    }
}

struct FrozenClock;

impl HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

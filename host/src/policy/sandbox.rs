//! Per-call store state: an empty WASI context, the memory cap and the guest's
//! bounded log.

use rand::SeedableRng;
use rand::rngs::StdRng;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{HostWallClock, WasiCtx, WasiCtxView, WasiView};

use super::model::LogLevel;

/// Lines a policy may log per call, and the length each is cut to.
const LOG_LINES_PER_CALL: u32 = 32;
const LOG_LINE_BYTES: usize = 1024;
/// What the guest's stdout and stderr (panic messages) may hold per call.
const STDIO_BYTES: usize = 16 * 1024;

/// Limits one call runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
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

/// The store's data for one call.
pub struct Sandbox {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(super) memory: MemoryCap,
    log: GuestLog,
    stdio: MemoryOutputPipe,
}

impl Sandbox {
    pub fn new(policy: Arc<str>, limits: Limits) -> Sandbox {
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
            table: ResourceTable::new(),
            memory: MemoryCap {
                limit_bytes: limits.memory_bytes,
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

    /// What the guest printed (e.g. a panic message), lossily decoded.
    pub fn stdio(&self) -> String {
        String::from_utf8_lossy(&self.stdio.contents()).into_owned()
    }

    pub fn log(&mut self, level: LogLevel, message: &str) {
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

/// Refuses memory growth past the limit and remembers that it did, so the
/// resulting trap is reported as out-of-memory rather than as a plain trap.
pub struct MemoryCap {
    pub limit_bytes: usize,
    pub exceeded: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit_bytes {
            self.exceeded = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
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
        let message = truncate(message, LOG_LINE_BYTES);
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

fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
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

//! The one wasmtime engine all policies share, its linker, the epoch ticker
//! that makes running guests yield, and the runtime whose timers bound every
//! call.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{
    Cache, CacheConfig, Config, Enabled, Engine, EngineWeak, InstanceAllocationStrategy,
    PoolingAllocationConfig,
};

use super::capacity::{Capacity, POOL_SLOTS};
use super::compiled::CompiledComponents;
use super::contract::Contract;
use super::evaluation_metrics::EvaluationMetrics;
use super::model::LogLevel;
use super::sandbox::{MAX_MEMORY_BYTES, Sandbox};

/// How often the epoch advances: a running guest yields to the call's timer
/// this often, so deadlines are enforced to this granularity.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The environment variable naming a directory where compiled policy code
/// is kept across restarts, by the component's digest and the engine's
/// version and settings: a restart or a reload of an unchanged component
/// reads its code back instead of compiling it again (seconds for a Python
/// or JavaScript component). Unset or empty: nothing is written to disk.
/// The directory must be writable by the CCM alone: its code is run as is.
pub const COMPILE_CACHE_ENV: &str = "VCD_CCM_COMPILE_CACHE";

/// The size the compile cache is trimmed back to, least recently used first.
const COMPILE_CACHE_BYTES: u64 = 512 << 20;

/// The engine and linker every policy is compiled and instantiated with.
pub struct PolicyEngine {
    pub(super) engine: Engine,
    pub(super) linker: Linker<Sandbox>,
    pub(super) metrics: EvaluationMetrics,
    pub(super) capacity: Capacity,
    pub(super) compiled: CompiledComponents,
}

/// The engine, its linker, the epoch ticker or the timer runtime could not be
/// set up; the message says which and why.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the wasm engine: {0}")]
pub struct EngineError(String);

impl PolicyEngine {
    /// Exports the evaluation metrics of every policy this engine runs.
    pub fn register_metrics(&self, registry: &mut prometheus_client::registry::Registry) {
        self.metrics.register(registry);
    }

    /// Builds the engine and starts its epoch ticker, which stops by itself when
    /// the engine is dropped.
    pub fn new() -> Result<Arc<PolicyEngine>, EngineError> {
        let fail = |e: wasmtime::Error| EngineError(format!("{e:#}"));
        // Winch, the baseline compiler: a policy compiles in tens of milliseconds
        // instead of hundreds, and a decision's cost is dominated by creating the
        // instance, not by running the guest's few branches.
        // Calls run on fibers (async): a guest waiting in a WASI call (a
        // sleep is a `poll` on a monotonic-clock pollable) is a pending future
        // that the call's deadline drops, which a synchronous call could never
        // interrupt.
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .max_wasm_stack(1 << 20)
            .async_stack_size(2 << 20)
            .strategy(wasmtime::Strategy::Winch)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(instance_pool()));
        let disk = disk_cache()?;
        config.cache(disk.clone());
        let engine = Engine::new(&config).map_err(fail)?;
        let mut linker: Linker<Sandbox> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(fail)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(fail)?;
        // Each contract version has its own host and types instances: 0.x
        // versions are not semver-compatible with each other.
        for contract in Contract::ALL {
            linker
                .instance(&contract.host_interface())
                .and_then(|mut host| {
                    // The message is lifted under the store's hostcall fuel, so
                    // its size is bounded before it is copied.
                    host.func_wrap("log", |mut cx, (level, message): (LogLevel, String)| {
                        cx.data_mut().log(level, &message);
                        Ok(())
                    })
                })
                .map_err(fail)?;
            linker.instance(&contract.types_interface()).map_err(fail)?;
        }
        spawn_ticker(engine.weak())
            .map_err(|e| EngineError(format!("epoch ticker thread: {e}")))?;
        runtime()?;
        Ok(Arc::new(PolicyEngine {
            engine,
            linker,
            metrics: EvaluationMetrics::default(),
            capacity: Capacity::default(),
            compiled: CompiledComponents::new(disk),
        }))
    }

    /// Runs a policy future (a load, a decision) to completion on the
    /// calling thread, for callers that are not async: the command-line
    /// tools, suite runs, the reload thread. Must not be called on an async
    /// worker thread.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        runtime()
            .expect("the policy runtime started with the engine")
            .block_on(future)
    }
}

/// The compile cache `VCD_CCM_COMPILE_CACHE` names, if any.
fn disk_cache() -> Result<Option<Cache>, EngineError> {
    let Some(dir) = std::env::var_os(COMPILE_CACHE_ENV).filter(|dir| !dir.is_empty()) else {
        return Ok(None);
    };
    let mut config = CacheConfig::new();
    config
        .with_directory(&dir)
        .with_files_total_size_soft_limit(COMPILE_CACHE_BYTES);
    Cache::new(config).map(Some).map_err(|e| {
        EngineError(format!(
            "{COMPILE_CACHE_ENV}={}: {e:#}; name a directory the CCM can create and write, or unset it",
            Path::new(&dir).display()
        ))
    })
}

/// What one component may hold. A Rust `wasm32-wasip2` component has a
/// handful of core instances (the program, the WASI adapter and its shims),
/// one or two memories and a few tables; a component that needs more is
/// refused when it is compiled, so every call fits one pool slot.
pub const CORE_INSTANCES_PER_COMPONENT: u32 = 16;
/// The most linear memories one component may have, over all its core instances.
pub const MEMORIES_PER_COMPONENT: u32 = 2;
/// The most tables one component may have, over all its core instances.
pub const TABLES_PER_COMPONENT: u32 = 8;

/// How much of a slot's memories and tables stays mapped between calls,
/// reset to its initial contents in place (only the pages the call touched,
/// where the kernel has PAGEMAP_SCAN, Linux 6.7) instead of unmapped: a
/// fresh instance per call otherwise takes a page fault and a zeroed page
/// for every page it touches, which was half of a decision's time. Costs
/// at most this much resident memory per slot that has been used.
const KEEP_RESIDENT_BYTES: usize = 2 << 20;

fn instance_pool() -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(POOL_SLOTS)
        .max_core_instances_per_component(CORE_INSTANCES_PER_COMPONENT)
        .max_memories_per_component(MEMORIES_PER_COMPONENT)
        .max_tables_per_component(TABLES_PER_COMPONENT)
        .total_core_instances(POOL_SLOTS * CORE_INSTANCES_PER_COMPONENT)
        .total_memories(POOL_SLOTS * MEMORIES_PER_COMPONENT)
        .total_tables(POOL_SLOTS * TABLES_PER_COMPONENT)
        .total_stacks(POOL_SLOTS)
        .max_memory_size(MAX_MEMORY_BYTES)
        .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
        .table_keep_resident(KEEP_RESIDENT_BYTES)
        .pagemap_scan(Enabled::Auto);
    pool
}

/// The runtime behind [`PolicyEngine::block_on`]: one thread that drives the
/// timers (deadlines, slot waits, a guest's sleeps) of calls made from
/// threads that are not async; the calls themselves run on their callers'
/// threads. Never dropped, so it can be used from any thread at any time.
fn runtime() -> Result<&'static tokio::runtime::Runtime, EngineError> {
    static RUNTIME: OnceLock<std::io::Result<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("policy-timers")
                .enable_time()
                .build()
        })
        .as_ref()
        .map_err(|e| EngineError(format!("policy runtime: {e}")))
}

fn spawn_ticker(engine: EngineWeak) -> std::io::Result<()> {
    thread::Builder::new()
        .name("policy-epoch".into())
        .spawn(move || {
            while let Some(engine) = engine.upgrade() {
                engine.increment_epoch();
                drop(engine);
                thread::sleep(EPOCH_TICK);
            }
        })
        .map(drop)
}

//! The one wasmtime engine all policies share, its linker, and the epoch ticker
//! that enforces call deadlines.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, EngineWeak, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::metrics::EvaluationMetrics;
use super::model::LogLevel;
use super::sandbox::Sandbox;

/// How often the epoch advances; deadlines are enforced to this granularity.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The largest memory cap a policy may ask for (`memoryLimitMiB` ≤ 1024).
pub const MAX_MEMORY_BYTES: usize = 1 << 30;

/// The host interface policies may import.
pub const HOST_INTERFACE: &str = "vcd:lb-policy/host@0.1.0";
/// The contract's types; policies import it, but it holds no functions.
const TYPES_INTERFACE: &str = "vcd:lb-policy/types@0.1.0";

/// The engine and linker every policy is compiled and instantiated with.
pub struct PolicyEngine {
    pub(super) engine: Engine,
    pub(super) linker: Linker<Sandbox>,
    pub(super) metrics: EvaluationMetrics,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot set up the wasm engine: {0}")]
pub struct EngineError(String);

impl PolicyEngine {
    /// Builds the engine and starts its epoch ticker, which stops by itself when
    /// the engine is dropped.
    pub fn new() -> Result<Arc<PolicyEngine>, EngineError> {
        let fail = |e: wasmtime::Error| EngineError(format!("{e:#}"));
        // Winch, the baseline compiler: a policy compiles in tens of milliseconds
        // instead of hundreds, and a decision's cost is dominated by creating the
        // instance, not by running the guest's few branches.
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .max_wasm_stack(1 << 20)
            .strategy(wasmtime::Strategy::Winch)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(instance_pool()));
        let engine = Engine::new(&config).map_err(fail)?;
        let mut linker: Linker<Sandbox> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(fail)?;
        linker
            .instance(HOST_INTERFACE)
            .and_then(|mut host| {
                host.func_wrap("log", |mut cx, (level, message): (LogLevel, String)| {
                    cx.data_mut().log(level, &message);
                    Ok(())
                })
            })
            .map_err(fail)?;
        linker.instance(TYPES_INTERFACE).map_err(fail)?;
        spawn_ticker(engine.weak())
            .map_err(|e| EngineError(format!("epoch ticker thread: {e}")))?;
        Ok(Arc::new(PolicyEngine {
            engine,
            linker,
            metrics: EvaluationMetrics::default(),
        }))
    }

    /// Epoch ticks that cover `timeout`: at least `timeout`, at most one tick more.
    pub(super) fn deadline_ticks(timeout: Duration) -> u64 {
        let ticks = timeout.as_nanos().div_ceil(EPOCH_TICK.as_nanos());
        u64::try_from(ticks).unwrap_or(u64::MAX - 1).max(1) + 1
    }
}

/// Calls that may run at the same time; one more fails to instantiate rather
/// than waiting. Pooled slots make a fresh instance per call cheap.
pub const CONCURRENT_CALLS: u32 = 64;

fn instance_pool() -> PoolingAllocationConfig {
    // A Rust wasip2 component holds a few core instances (the program and the
    // WASI adapter), each with a memory and a couple of tables.
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(CONCURRENT_CALLS)
        .total_core_instances(CONCURRENT_CALLS * 8)
        .total_memories(CONCURRENT_CALLS * 2)
        .total_tables(CONCURRENT_CALLS * 4)
        .max_memory_size(MAX_MEMORY_BYTES);
    pool
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

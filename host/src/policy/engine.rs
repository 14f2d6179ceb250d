//! The one wasmtime engine all policies share, its linker, and the epoch ticker
//! that enforces call deadlines.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, EngineWeak};

use super::model::LogLevel;
use super::sandbox::Sandbox;

/// How often the epoch advances; deadlines are enforced to this granularity.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The host interface policies may import.
pub const HOST_INTERFACE: &str = "vcd:lb-policy/host@0.1.0";
/// The contract's types; policies import it, but it holds no functions.
const TYPES_INTERFACE: &str = "vcd:lb-policy/types@0.1.0";

/// The engine and linker every policy is compiled and instantiated with.
pub struct PolicyEngine {
    pub(super) engine: Engine,
    pub(super) linker: Linker<Sandbox>,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot set up the wasm engine: {0}")]
pub struct EngineError(String);

impl PolicyEngine {
    /// Builds the engine and starts its epoch ticker, which stops by itself when
    /// the engine is dropped.
    pub fn new() -> Result<Arc<PolicyEngine>, EngineError> {
        let fail = |e: wasmtime::Error| EngineError(format!("{e:#}"));
        let mut config = Config::new();
        config.wasm_component_model(true).epoch_interruption(true).max_wasm_stack(1 << 20);
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
        spawn_ticker(engine.weak()).map_err(|e| EngineError(format!("epoch ticker thread: {e}")))?;
        Ok(Arc::new(PolicyEngine { engine, linker }))
    }

    /// Epoch ticks that cover `timeout`: at least `timeout`, at most one tick more.
    pub(super) fn deadline_ticks(timeout: Duration) -> u64 {
        let ticks = timeout.as_nanos().div_ceil(EPOCH_TICK.as_nanos());
        u64::try_from(ticks).unwrap_or(u64::MAX - 1).max(1) + 1
    }
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

//! Compiled components by digest: loading an unchanged component again (a
//! reload that changed only its settings, an engine rebuilt in the same
//! process, one file under two names) reuses the machine code instead of
//! compiling it again, which is most of a load's cost. Bounded: the least
//! recently used are dropped first. Beneath it, wasmtime's own cache on disk
//! (`VCD_CCM_COMPILE_CACHE`, set up in `engine.rs`) outlives the process.

use std::sync::Mutex;
use std::time::Instant;

use wasmtime::Cache;
use wasmtime::component::Component;

/// How many compiled components are kept.
const KEPT: usize = 16;

/// The cache; see the module's documentation.
#[derive(Default)]
pub(super) struct CompiledComponents {
    /// Most recently used last.
    entries: Mutex<Vec<(String, Component)>>,
    /// The engine's disk cache, for its hit count.
    disk: Option<Cache>,
}

impl CompiledComponents {
    pub(super) fn new(disk: Option<Cache>) -> CompiledComponents {
        CompiledComponents {
            entries: Mutex::default(),
            disk,
        }
    }

    /// The component of `digest`, compiled by `compile` when not kept. A
    /// failed compile is not kept. Two loads of the same new component at
    /// once may both compile it.
    pub(super) fn get_or_compile(
        &self,
        digest: &str,
        compile: impl FnOnce() -> wasmtime::Result<Component>,
    ) -> wasmtime::Result<Component> {
        if let Some(component) = self.take_fresh(digest) {
            return Ok(component);
        }
        let disk_hits = self.disk_hits();
        let started = Instant::now();
        let component = compile()?;
        // Loads rarely overlap; when they do, one may be told the other's source.
        let source = if self.disk_hits() > disk_hits {
            "compile cache"
        } else {
            "compiler"
        };
        tracing::info!(
            digest,
            source,
            took_ms = started.elapsed().as_millis() as u64,
            "policy code ready"
        );
        let mut entries = self.lock();
        entries.retain(|(kept, _)| kept != digest);
        if entries.len() >= KEPT {
            entries.remove(0);
        }
        entries.push((digest.to_string(), component.clone()));
        Ok(component)
    }

    fn disk_hits(&self) -> usize {
        self.disk.as_ref().map_or(0, Cache::cache_hits)
    }

    fn take_fresh(&self, digest: &str) -> Option<Component> {
        let mut entries = self.lock();
        let at = entries.iter().position(|(kept, _)| kept == digest)?;
        let entry = entries.remove(at);
        let component = entry.1.clone();
        entries.push(entry);
        Some(component)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(String, Component)>> {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::policy::builtin::DEFAULT_POLICY_WASM;

    #[test]
    fn a_kept_component_is_not_compiled_again_and_the_oldest_goes_first() {
        let engine = wasmtime::Engine::default();
        let compiled = Cell::new(0);
        let compile = || {
            compiled.set(compiled.get() + 1);
            Component::new(&engine, DEFAULT_POLICY_WASM)
        };
        let cache = CompiledComponents::default();
        cache.get_or_compile("a", compile).unwrap();
        cache.get_or_compile("a", compile).unwrap();
        assert_eq!(compiled.get(), 1);
        for other in 0..KEPT {
            cache.get_or_compile(&other.to_string(), compile).unwrap();
        }
        assert_eq!(compiled.get(), 1 + KEPT);
        cache.get_or_compile("a", compile).unwrap();
        assert_eq!(compiled.get(), 2 + KEPT, "a was the least recently used");
        let failing = || Component::new(&engine, b"not wasm");
        assert!(cache.get_or_compile("bad", failing).is_err());
        assert!(cache.get_or_compile("bad", failing).is_err());
    }
}

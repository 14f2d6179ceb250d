//! Calling a policy: a fresh store and instance per call, under the memory cap
//! and the epoch deadline; failures come back as typed errors.

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{Instance, TypedFunc};
use wasmtime::{Store, Trap};

use super::engine::PolicyEngine;
use super::errors::{CallError, EvalError};
use super::loader::{Compiled, Exports, Policy};
use super::metrics::Outcome;
use super::model::{Decision, DecisionError, DecisionInput, PolicyInfo};
use super::sandbox::{Limits, Sandbox};
use super::validate;

type DecideFn<'a> = TypedFunc<(&'a str, &'a DecisionInput), (Result<Decision, DecisionError>,)>;

impl Compiled {
    /// Runs `call` on a new instance in a new store, then drops both: no state
    /// survives a call, and a trapped instance is never reused.
    fn run<R>(
        &self,
        name: &Arc<str>,
        limits: Limits,
        call: impl FnOnce(&mut Store<Sandbox>, &Instance, &Exports) -> wasmtime::Result<R>,
    ) -> Result<R, CallError> {
        let mut store = Store::new(&self.engine.engine, Sandbox::new(name.clone(), limits));
        store.limiter(|sandbox| &mut sandbox.memory);
        store.set_epoch_deadline(PolicyEngine::deadline_ticks(limits.timeout));
        let result = match self.pre.instantiate(&mut store) {
            Ok(instance) => {
                call(&mut store, &instance, &self.exports).map_err(|e| classify(&store, e, limits))
            }
            Err(e) if store.data().memory.exceeded => {
                drop(e);
                Err(CallError::OutOfMemory {
                    limit_bytes: limits.memory_bytes,
                })
            }
            Err(e) => Err(CallError::Instantiate(format!("{e:#}"))),
        };
        store.data().finish();
        result
    }

    pub(super) fn describe(
        &self,
        name: &Arc<str>,
        limits: Limits,
    ) -> Result<PolicyInfo, CallError> {
        self.run(name, limits, |store, instance, exports| {
            let describe =
                instance.get_typed_func::<(), (PolicyInfo,)>(&mut *store, &exports.describe)?;
            Ok(describe.call(&mut *store, ())?.0)
        })
    }

    pub(super) fn validate_config(
        &self,
        name: &Arc<str>,
        limits: Limits,
        config: &str,
    ) -> Result<Result<(), String>, CallError> {
        self.run(name, limits, |store, instance, exports| {
            let validate = instance.get_typed_func::<(&str,), (Result<(), String>,)>(
                &mut *store,
                &exports.validate_config,
            )?;
            Ok(validate.call(&mut *store, (config,))?.0)
        })
    }

    /// Checks that `decide` has exactly the contract's signature, without calling it.
    pub(super) fn check_decide_type(
        &self,
        name: &Arc<str>,
        limits: Limits,
    ) -> Result<(), CallError> {
        self.run(name, limits, |store, instance, exports| {
            instance.get_typed_func::<(&str, &DecisionInput), (Result<Decision, DecisionError>,)>(
                &mut *store,
                &exports.decide,
            )?;
            Ok(())
        })
    }
}

impl Policy {
    /// Asks the policy for a decision and checks it against the contract.
    pub fn decide(&self, input: &DecisionInput) -> Result<Decision, EvalError> {
        let started = Instant::now();
        let result = self.decide_checked(input);
        self.compiled
            .engine
            .metrics
            .record(&self.name, Outcome::of(&result), started.elapsed());
        result
    }

    fn decide_checked(&self, input: &DecisionInput) -> Result<Decision, EvalError> {
        let policy = || self.name.to_string();
        let outcome = self
            .compiled
            .run(&self.name, self.limits, |store, instance, exports| {
                let decide: DecideFn<'_> = instance.get_typed_func(&mut *store, exports.decide)?;
                Ok(decide.call(&mut *store, (self.config.as_str(), input))?.0)
            })
            .map_err(|cause| EvalError::Call {
                policy: policy(),
                cause,
            })?;
        let decision = outcome.map_err(|error| EvalError::Declined {
            policy: policy(),
            error,
        })?;
        validate::check(input, &decision).map_err(|problem| EvalError::InvalidDecision {
            policy: policy(),
            problem,
        })?;
        Ok(decision)
    }
}

fn classify(store: &Store<Sandbox>, error: wasmtime::Error, limits: Limits) -> CallError {
    if store.data().memory.exceeded {
        return CallError::OutOfMemory {
            limit_bytes: limits.memory_bytes,
        };
    }
    let stderr = store.data().stdio();
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => CallError::Timeout(limits.timeout),
        Some(trap) => CallError::Trap {
            trap: trap.to_string(),
            stderr,
        },
        None => CallError::Trap {
            trap: format!("{error:#}"),
            stderr,
        },
    }
}

//! Calling a policy: a fresh store and instance per call, under the memory
//! cap, the output bound and a wall-clock deadline; failures come back as
//! typed errors.
//!
//! The deadline holds whatever the guest does. Calls run on a fiber: a guest
//! computing is made to yield at every epoch tick, and a guest waiting in a
//! WASI call (a sleep, a poll) is a pending host future. Either way the
//! call's timer gets to run, and when it fires the call's future, with its
//! store, instance and any pending host call, is dropped. The yields also
//! mean a call never holds the async worker it runs on for more than a tick.

use std::sync::Arc;
use std::time::Instant;

use wasmtime::component::{Instance, TypedFunc};
use wasmtime::{Store, Trap, UpdateDeadline};

use super::contract::Contract;
use super::errors::{CallError, EvalError};
use super::evaluation_metrics::Outcome;
use super::lift_charge::LiftCharge;
use super::loader::{Compiled, Exports, Policy};
use super::model::{Decision, DecisionError, DecisionInput, PolicyInfo, v0_1, v0_2, v0_3};
use super::output;
use super::sandbox::{CallCost, Limits, OUTPUT_BYTES, Sandbox};
use super::validate;
use crate::text::sanitize;

type DecideFn<'a> = TypedFunc<(&'a str, &'a DecisionInput), (Result<Decision, DecisionError>,)>;
type DecideFnV0_3<'a> =
    TypedFunc<(&'a str, &'a v0_3::DecisionInput), (Result<v0_3::Decision, DecisionError>,)>;
type DecideFnV0_2<'a> =
    TypedFunc<(&'a str, &'a v0_2::DecisionInput), (Result<v0_2::Decision, DecisionError>,)>;
type DecideFnV0_1<'a> =
    TypedFunc<(&'a str, &'a v0_1::DecisionInput), (Result<v0_1::Decision, DecisionError>,)>;

/// How much of a trap's description an error quotes.
const TRAP_TEXT_BYTES: usize = 512;

impl Compiled {
    /// Runs `call` on a new instance in a new store, then drops both: no state
    /// survives a call, and a trapped instance is never reused.
    async fn run<R>(
        &self,
        name: &Arc<str>,
        limits: Limits,
        call: impl AsyncFnOnce(&mut Store<Sandbox>, &Instance, &Exports) -> wasmtime::Result<R>,
    ) -> Result<R, CallError> {
        self.run_measured(name, limits, call).await.0
    }

    /// [`Compiled::run`], also returning the call's time under its deadline
    /// and its memory high-water mark (two reads, nothing the call pays for).
    async fn run_measured<R>(
        &self,
        name: &Arc<str>,
        limits: Limits,
        call: impl AsyncFnOnce(&mut Store<Sandbox>, &Instance, &Exports) -> wasmtime::Result<R>,
    ) -> (Result<R, CallError>, CallCost) {
        let engine = &self.engine;
        {
            let _slot = match self.share.acquire(&engine.capacity).await {
                Ok(slot) => slot,
                Err(busy) => return (Err(busy), CallCost::default()),
            };
            let mut store = Store::new(&engine.engine, Sandbox::new(name.clone(), limits));
            store.limiter(|sandbox| &mut sandbox.memory);
            store.set_hostcall_fuel(OUTPUT_BYTES);
            let started = Instant::now();
            store.epoch_deadline_callback(move |_| {
                if started.elapsed() >= limits.timeout {
                    Err(Trap::Interrupt.into())
                } else {
                    Ok(UpdateDeadline::Yield(1))
                }
            });
            store.set_epoch_deadline(1);
            let attempt = async {
                let instance = self.pre.instantiate_async(&mut store).await?;
                call(&mut store, &instance, &self.exports).await
            };
            let outcome = tokio::time::timeout(limits.timeout, attempt).await;
            let result = match outcome {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) => Err(classify(&store, error, limits)),
                Err(_elapsed) => Err(CallError::Timeout(limits.timeout)),
            };
            let cost = CallCost {
                time: started.elapsed(),
                peak_memory_bytes: store.data().memory.used_bytes(),
                output_bytes: None,
            };
            store.data().finish();
            (result, cost)
        }
    }

    pub(super) async fn describe(
        &self,
        name: &Arc<str>,
        limits: Limits,
    ) -> Result<PolicyInfo, CallError> {
        self.run(name, limits, async |store, instance, exports| {
            let describe =
                instance.get_typed_func::<(), (PolicyInfo,)>(&mut *store, &exports.describe)?;
            Ok(describe.call_async(&mut *store, ()).await?.0)
        })
        .await
        .map(output::info)
    }

    pub(super) async fn validate_config(
        &self,
        name: &Arc<str>,
        limits: Limits,
        config: &str,
    ) -> Result<Result<(), String>, CallError> {
        self.run(name, limits, async |store, instance, exports| {
            let validate = instance.get_typed_func::<(&str,), (Result<(), String>,)>(
                &mut *store,
                &exports.validate_config,
            )?;
            Ok(validate.call_async(&mut *store, (config,)).await?.0)
        })
        .await
        .map(|answer| answer.map_err(output::message))
    }

    /// Checks that `decide` has exactly the contract's signature, without calling it.
    pub(super) async fn check_decide_type(
        &self,
        name: &Arc<str>,
        limits: Limits,
    ) -> Result<(), CallError> {
        self.run(name, limits, async |store, instance, exports| {
            match exports.contract {
                Contract::V0_4 => {
                    let _: DecideFn<'_> = instance.get_typed_func(&mut *store, exports.decide)?;
                }
                Contract::V0_3 => {
                    let _: DecideFnV0_3<'_> =
                        instance.get_typed_func(&mut *store, exports.decide)?;
                }
                Contract::V0_2 => {
                    let _: DecideFnV0_2<'_> =
                        instance.get_typed_func(&mut *store, exports.decide)?;
                }
                Contract::V0_1 => {
                    let _: DecideFnV0_1<'_> =
                        instance.get_typed_func(&mut *store, exports.decide)?;
                }
            }
            Ok(())
        })
        .await
    }
}

impl Policy {
    /// Asks the policy for a decision and checks it against the contract.
    /// Returns within the slot wait plus the policy's deadline.
    pub async fn decide(&self, input: &DecisionInput) -> Result<Decision, EvalError> {
        self.decide_observed(input, |_| {}).await
    }

    /// [`Policy::decide`] for policy suites: the same call, checks and
    /// metrics, and what the call cost. Only this variant counts the output.
    pub async fn decide_measured(
        &self,
        input: &DecisionInput,
    ) -> (Result<Decision, EvalError>, CallCost) {
        let mut cost = CallCost::default();
        let result = self
            .decide_observed(input, |measured| {
                cost = CallCost {
                    output_bytes: measured.answer.map(LiftCharge::lift_charge),
                    ..measured.cost
                };
            })
            .await;
        (result, cost)
    }

    async fn decide_observed(
        &self,
        input: &DecisionInput,
        observe: impl FnOnce(Measured<'_>),
    ) -> Result<Decision, EvalError> {
        let started = Instant::now();
        let result = self.decide_checked(input, observe).await;
        self.compiled
            .engine
            .metrics
            .record(&self.name, Outcome::of(&result), started.elapsed());
        result
    }

    async fn decide_checked(
        &self,
        input: &DecisionInput,
        observe: impl FnOnce(Measured<'_>),
    ) -> Result<Decision, EvalError> {
        let policy = || self.name.to_string();
        let call_failed = |cause| EvalError::Call {
            policy: policy(),
            cause,
        };
        let (outcome, cost) = self
            .compiled
            .run_measured(&self.name, self.limits, async |store, instance, exports| {
                let config = self.config.as_str();
                Ok(match exports.contract {
                    Contract::V0_4 => {
                        let decide: DecideFn<'_> =
                            instance.get_typed_func(&mut *store, exports.decide)?;
                        decide.call_async(&mut *store, (config, input)).await?.0
                    }
                    Contract::V0_3 => {
                        let input = v0_3::DecisionInput::from(input);
                        let decide: DecideFnV0_3<'_> =
                            instance.get_typed_func(&mut *store, exports.decide)?;
                        let output = decide.call_async(&mut *store, (config, &input)).await?.0;
                        output.map(Decision::from)
                    }
                    Contract::V0_2 => {
                        let input = v0_2::DecisionInput::from(input);
                        let decide: DecideFnV0_2<'_> =
                            instance.get_typed_func(&mut *store, exports.decide)?;
                        let output = decide.call_async(&mut *store, (config, &input)).await?.0;
                        output.map(Decision::from)
                    }
                    Contract::V0_1 => {
                        let input = v0_1::DecisionInput::from(input);
                        let decide: DecideFnV0_1<'_> =
                            instance.get_typed_func(&mut *store, exports.decide)?;
                        let output = decide.call_async(&mut *store, (config, &input)).await?.0;
                        output.map(Decision::from)
                    }
                })
            })
            .await;
        observe(Measured {
            answer: outcome.as_ref().ok(),
            cost,
        });
        let outcome = outcome.map_err(call_failed)?;
        let decision = outcome.map_err(|error| EvalError::Declined {
            policy: policy(),
            error: output::decision_error(error),
        })?;
        let decision = output::decision(decision).map_err(call_failed)?;
        validate::check(input, &decision).map_err(|problem| EvalError::InvalidDecision {
            policy: policy(),
            problem,
        })?;
        Ok(decision)
    }
}

/// A `decide` call as it came back from the sandbox: the guest's answer as
/// lifted (before it is escaped, capped and checked) and the call's cost.
struct Measured<'a> {
    answer: Option<&'a Result<Decision, DecisionError>>,
    cost: CallCost,
}

fn classify(store: &Store<Sandbox>, error: wasmtime::Error, limits: Limits) -> CallError {
    if store.data().memory.exceeded {
        return CallError::OutOfMemory {
            limit_bytes: limits.memory_bytes,
        };
    }
    if is_output_bound(&error) {
        return CallError::OutputTooLarge {
            limit_bytes: OUTPUT_BYTES,
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
            trap: sanitize(&format!("{error:#}"), TRAP_TEXT_BYTES),
            stderr,
        },
    }
}

/// Whether wasmtime refused to lift a value because it exceeded the store's
/// hostcall fuel. Wasmtime's error type for it is private; its message is
/// what identifies it (a sandbox test fails if that text changes).
fn is_output_bound(error: &wasmtime::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.to_string().contains("fuel allocated for hostcalls"))
}

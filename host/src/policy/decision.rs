//! Deciding for one Service: the governing policy's decision, with its
//! shadow policies evaluated beside it on the same input (their results
//! compared and reported, never returned) and the decision captured when
//! the Service asks for it.

use futures::future::join_all;

use super::errors::EvalError;
use super::model::{Decision, DecisionInput};
use super::registry::{Registry, SelectError};

/// Why no decision came out.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// No policy can decide for the Service.
    #[error(transparent)]
    Select(#[from] SelectError),
    /// The governing policy failed, declined or broke the contract.
    #[error(transparent)]
    Eval(#[from] EvalError),
}

impl Registry {
    /// The governing policy's decision for `input`. Shadows run at the same
    /// time, each in its own sandbox under its own budgets, so they add no
    /// latency beyond the slower call and their failures stay theirs.
    pub async fn decide(&self, input: &DecisionInput) -> Result<Decision, DecideError> {
        let set = self.current();
        let policy = set.select(&input.service, &input.namespace)?;
        let shadows = set.shadows_of(policy.name());
        let (result, shadowed) = futures::join!(
            policy.decide(input),
            join_all(shadows.iter().map(|shadow| shadow.decide(input)))
        );
        for (shadow, shadow_result) in shadows.iter().zip(&shadowed) {
            self.shadows().record(
                input,
                (policy.name(), &result),
                (shadow.name(), shadow_result),
            );
        }
        self.captures().record(input, &policy, &result);
        Ok(result?)
    }
}

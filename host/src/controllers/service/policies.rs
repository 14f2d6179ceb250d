//! Policy reloads reach the Services they govern: a Service whose governing
//! policy changed (a new version, other settings, another policy now
//! selects it) is ensured again, since its decisions may differ; a Service
//! whose policy a reload refused gets a Warning Event, while the previous
//! version keeps deciding for it.

use std::sync::Arc;

use super::Shared;
use super::sync::{object_ref, service_key};
use crate::controllers::EventType::Warning;
use crate::policy::builtin::DEFAULT_POLICY_NAME;
use crate::policy::manifest::MANIFEST_FILE;
use crate::policy::registry::SelectError;
use crate::policy::{Policy, Registry};

/// Our reason for a reload that refused the Service's policy.
pub const POLICY_RELOAD_FAILED: &str = "LoadBalancerPolicyReloadFailed";

type Selection = Result<Arc<Policy>, SelectError>;

impl Shared {
    pub(super) async fn follow_policy_reloads(self: Arc<Self>, policies: Arc<Registry>) {
        let mut reloaded = policies.subscribe();
        let mut previous = policies.current();
        while reloaded.changed().await.is_ok() {
            let current = policies.current();
            let refused = policies.status().last_refusals;
            for service in self.services.state() {
                if !self.class.wants_load_balancer(&service) {
                    continue;
                }
                let (spec, namespace) = self.spec_of(&service).to_policy();
                let after = current.select(&spec, &namespace);
                if !same(&previous.select(&spec, &namespace), &after) {
                    self.queue.add(service_key(&service));
                }
                let governing = governing(&after);
                for (name, reason) in &refused {
                    let concerned = governing.as_deref() == Some(name.as_str())
                        || (name == MANIFEST_FILE
                            && governing.as_deref() != Some(DEFAULT_POLICY_NAME));
                    if concerned {
                        let message = format!(
                            "policy {name} was not reloaded: {reason}; the previous version keeps deciding"
                        );
                        self.event(
                            &object_ref(&service),
                            Warning,
                            POLICY_RELOAD_FAILED,
                            &message,
                        )
                        .await;
                    }
                }
            }
            previous = current;
        }
    }
}

fn same(before: &Selection, after: &Selection) -> bool {
    match (before, after) {
        (Ok(a), Ok(b)) => Arc::ptr_eq(a, b),
        (Err(a), Err(b)) => a == b,
        _ => false,
    }
}

/// The name of the policy that governs (or should govern) the Service.
fn governing(selection: &Selection) -> Option<String> {
    match selection {
        Ok(policy) => Some(policy.name().to_string()),
        Err(SelectError::Unavailable { name, .. }) => Some(name.clone()),
        Err(_) => None,
    }
}

//! Changes of which policy governs a Service reach it: a Service whose
//! governing policy changed (a new version, other settings, another policy
//! now selects it, its Namespace's labels changed) is ensured again, since
//! its decisions may differ; a Service whose policy a reload refused gets a
//! Warning Event, while the previous version keeps deciding for it, and so
//! does the leader Lease, once per refused policy.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, Service};
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::broadcast::error::RecvError;

use super::Shared;
use super::predicates::ClassFilter;
use super::spec::service_key;
use super::spec::service_spec;
use super::sync::object_ref;
use crate::controllers::EventType::{Normal, Warning};
use crate::controllers::informer::Change;
use crate::controllers::workqueue::WorkQueue;
use crate::policy::builtin::DEFAULT_POLICY_NAME;
use crate::policy::manifest::MANIFEST_FILE;
use crate::policy::registry::{PolicySet, PolicyState, SelectError};
use crate::policy::{Policy, Registry};

/// Our reason for a reload that refused the Service's policy.
pub const POLICY_RELOAD_FAILED: &str = "LoadBalancerPolicyReloadFailed";
/// Our reason for a policy selecting a class the process does not serve.
pub const UNSERVED_CLASS: &str = "PolicyClassNotServed";
/// Our reason for a shadow policy that would decide otherwise.
pub const SHADOW_POLICY_DIFFERS: &str = "ShadowPolicyDiffers";

type Selection = Result<Arc<Policy>, SelectError>;

pub(super) async fn follow_policy_reloads(shared: Arc<Shared>, policies: Arc<Registry>) {
    let mut reloaded = policies.subscribe();
    let mut previous = policies.current();
    report_unserved_classes(&shared, &previous).await;
    while reloaded.changed().await.is_ok() {
        let current = policies.current();
        report_unserved_classes(&shared, &current).await;
        let refused = policies.status().last_refusals;
        for service in shared.services.state() {
            if !shared.class.wants_load_balancer(&service) {
                continue;
            }
            let (spec, namespace) = shared.caches.spec_of(&service).to_policy();
            let after = current.select(&spec, &namespace);
            if !same(&previous.select(&spec, &namespace), &after) {
                shared.queue.add(service_key(&service));
            }
            let governing = governing(&after);
            for (name, reason) in &refused {
                let concerned = governing.as_deref() == Some(name.as_str())
                    || (name == MANIFEST_FILE && governing.as_deref() != Some(DEFAULT_POLICY_NAME));
                if concerned {
                    let message = format!(
                        "policy {name} was not reloaded: {reason}; the previous version keeps deciding"
                    );
                    shared
                        .event(
                            &object_ref(&service),
                            Warning,
                            POLICY_RELOAD_FAILED,
                            &message,
                        )
                        .await;
                }
            }
        }
        // The process's own record, on the Lease: refusals of policies
        // that govern no Service yet (a pull that failed) show too.
        for (name, reason) in &refused {
            let serving = match current.provider(name).map(|p| &p.state) {
                Some(PolicyState::Failed(_)) => "the Services it governs fail until it loads",
                _ => "the previous version keeps deciding",
            };
            let message = format!("policy {name} was not reloaded: {reason}; {serving}");
            shared
                .event(&shared.events_on, Warning, POLICY_RELOAD_FAILED, &message)
                .await;
        }
        previous = current;
    }
}

/// A selector naming a class the process does not serve reaches no
/// Service: said at every load, on the Lease, in the log and as a gauge.
async fn report_unserved_classes(shared: &Shared, set: &PolicySet) {
    let unserved: Vec<(&str, &str)> = set
        .providers
        .iter()
        .filter_map(|p| {
            let class = p.entry.selector.load_balancer_class.as_deref()?;
            (!shared.class.accepts(Some(class))).then_some((p.entry.name.as_str(), class))
        })
        .collect();
    shared
        .metrics
        .unserved_class_policies
        .set(unserved.len() as i64);
    for (name, class) in unserved {
        let message = format!(
            "policy {name} selects loadBalancerClass {class:?}, which this process does not serve (it serves {}); add --load-balancer-class={class} or change the selector",
            shared.class.describe()
        );
        tracing::warn!(policy = name, class, "{message}");
        shared
            .event(&shared.events_on, Warning, UNSERVED_CLASS, &message)
            .await;
    }
}

/// Puts each shadow policy's difference on its Service as a Normal
/// Event: the Service itself got the governing decision.
pub(super) async fn report_shadow_differences(shared: Arc<Shared>, policies: Arc<Registry>) {
    let mut reports = policies.shadows().subscribe();
    loop {
        let report = match reports.recv().await {
            Ok(report) => report,
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(
                    missed,
                    "shadow policy differences came faster than their Events; some were not reported"
                );
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let key = ObjectRef::new(&report.name).within(&report.namespace);
        let Some(service) = shared.services.get(&key) else {
            continue;
        };
        if service.metadata.uid.as_deref() != Some(report.uid.as_str()) {
            continue;
        }
        shared
            .event(
                &object_ref(&service),
                Normal,
                SHADOW_POLICY_DIFFERS,
                &report.message,
            )
            .await;
    }
}

/// The Namespace watch's handler. A Namespace reaching the cache releases
/// the Services whose sync waited for it (policies select on its labels);
/// a label change queues the Services it moves to another policy.
pub(super) fn on_namespace_change(
    services: Store<Service>,
    queue: Arc<WorkQueue<String>>,
    class: ClassFilter,
    policies: Arc<Registry>,
) -> impl FnMut(&Change<Namespace>) + Send + 'static {
    move |change| {
        let (before, namespace) = match change {
            Change::Added(namespace) => (None, namespace),
            Change::Updated { old, new } if old.metadata.labels != new.metadata.labels => {
                (Some(old.metadata.labels.clone().unwrap_or_default()), new)
            }
            Change::Updated { .. } | Change::Deleted(_) => return,
        };
        let name = namespace.metadata.name.as_deref();
        let after = namespace.metadata.labels.clone().unwrap_or_default();
        let current = policies.current();
        let select = |service: &Service, labels: &BTreeMap<String, String>| {
            let (spec, namespace) = service_spec(service, labels.clone()).to_policy();
            current.select(&spec, &namespace)
        };
        for service in services.state() {
            if service.metadata.namespace.as_deref() != name || !class.wants_load_balancer(&service)
            {
                continue;
            }
            let moved = before
                .as_ref()
                .is_none_or(|before| !same(&select(&service, before), &select(&service, &after)));
            if moved {
                queue.add(service_key(&service));
            }
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

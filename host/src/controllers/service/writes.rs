//! The service controller's writes, as upstream sends them: two-way
//! strategic-merge patches to `/status` for the finalizer, the ingress and
//! our condition (merged by `type`, so others' conditions stay), with no
//! resourceVersion precondition.

use k8s_openapi::api::core::v1::{LoadBalancerIngress, Service};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde_json::{Value, json};

use super::condition::{Readiness, entry};
use super::predicates::{CLEANUP_FINALIZER, has_finalizer};

pub struct ServiceWrites {
    client: Client,
}

impl ServiceWrites {
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    fn api(&self, service: &Service) -> Api<Service> {
        Api::namespaced(
            self.client.clone(),
            service.metadata.namespace.as_deref().unwrap_or("default"),
        )
    }

    async fn patch(&self, service: &Service, patch: Value) -> Result<(), kube::Error> {
        let name = service.metadata.name.as_deref().unwrap_or_default();
        self.api(service)
            .patch_status(name, &PatchParams::default(), &Patch::Strategic(patch))
            .await
            .map(drop)
    }

    /// Adds the cleanup finalizer unless it is there already.
    pub async fn add_finalizer(&self, service: &Service) -> Result<(), kube::Error> {
        if has_finalizer(service) {
            return Ok(());
        }
        let mut order = service.metadata.finalizers.clone().unwrap_or_default();
        order.push(CLEANUP_FINALIZER.to_string());
        let patch = json!({"metadata": {
            "$setElementOrder/finalizers": order,
            "finalizers": [CLEANUP_FINALIZER],
        }});
        self.patch(service, patch).await
    }

    /// Removes the cleanup finalizer; other controllers' stay.
    pub async fn remove_finalizer(&self, service: &Service) -> Result<(), kube::Error> {
        if !has_finalizer(service) {
            return Ok(());
        }
        let patch =
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [CLEANUP_FINALIZER]}});
        self.patch(service, patch).await
    }

    /// Replaces `status.loadBalancer.ingress` when `ingress` is given, and
    /// merges `conditions` (entries, or `$patch: delete` directives) by type,
    /// in one patch. A Service that vanished meanwhile (its finalizer was
    /// just removed) is not an error.
    pub async fn set_status(
        &self,
        service: &Service,
        ingress: Option<&[LoadBalancerIngress]>,
        conditions: Vec<Value>,
    ) -> Result<(), kube::Error> {
        let mut status = serde_json::Map::new();
        if let Some(ingress) = ingress {
            status.insert("loadBalancer".into(), json!({"ingress": ingress}));
        }
        if !conditions.is_empty() {
            status.insert("conditions".into(), Value::Array(conditions));
        }
        if status.is_empty() {
            return Ok(());
        }
        match self.patch(service, json!({"status": status})).await {
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            other => other,
        }
    }

    /// Writes what `readiness` says onto the Service's condition, if it
    /// says something new. Best effort: the sync's own outcome stands
    /// either way, and its Event already said the same.
    pub async fn set_condition(&self, service: &Service, readiness: &Readiness) {
        let Some(change) = readiness.change(service) else {
            return;
        };
        if let Err(error) = self.set_status(service, None, vec![entry(change)]).await {
            tracing::warn!(service = ?service.metadata.name, %error, "cannot write the Service's load-balancer condition");
        }
    }
}

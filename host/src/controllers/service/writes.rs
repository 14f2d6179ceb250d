//! The service controller's writes, as upstream sends them: two-way
//! strategic-merge patches to `/status` for the finalizer and the ingress,
//! with no resourceVersion precondition.

use k8s_openapi::api::core::v1::{LoadBalancerIngress, Service};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde_json::{Value, json};

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

    /// Replaces `status.loadBalancer.ingress`. A Service that vanished
    /// meanwhile (its finalizer was just removed) is not an error.
    pub async fn set_ingress(
        &self,
        service: &Service,
        ingress: &[LoadBalancerIngress],
    ) -> Result<(), kube::Error> {
        let patch = json!({"status": {"loadBalancer": {"ingress": ingress}}});
        match self.patch(service, patch).await {
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            other => other,
        }
    }
}

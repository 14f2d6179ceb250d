//! The load balancer's allocation journal, kept in an annotation of the
//! Service (written through `/status` like the finalizer, so the role needs
//! no write access to Service specs).

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Service;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use serde_json::json;

use crate::lb::ServiceSpec;
use crate::lb::journal::{ANNOTATION, AllocationJournal, JournalError};

/// Notes kept in the `vcd-ccm.io/ip-space-allocation` annotation.
pub struct AnnotationJournal {
    client: Client,
}

impl AnnotationJournal {
    /// A journal that patches Services through `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

impl AllocationJournal for AnnotationJournal {
    fn noted(&self, service: &ServiceSpec) -> Option<String> {
        service.annotations.get(ANNOTATION).cloned()
    }

    fn note<'a>(
        &'a self,
        service: &'a ServiceSpec,
        note: String,
    ) -> BoxFuture<'a, Result<(), JournalError>> {
        Box::pin(async move {
            let api: Api<Service> = Api::namespaced(self.client.clone(), &service.namespace);
            let patch = json!({"metadata": {"annotations": {ANNOTATION: note}}});
            api.patch_status(&service.name, &PatchParams::default(), &Patch::Merge(patch))
                .await
                .map(drop)
                .map_err(JournalError::from)
        })
    }
}

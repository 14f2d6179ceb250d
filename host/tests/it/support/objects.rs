//! Kubernetes objects the tests create, built one way.

use k8s_openapi::api::core::v1::Service;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde_json::{Value, json};

/// A LoadBalancer Service selecting `app: name`, one TCP port named
/// `p<port>` per entry of `ports`.
pub fn lb_service(name: &str, ports: &[i32]) -> Value {
    json!({
        "metadata": {"name": name},
        "spec": {
            "type": "LoadBalancer",
            "selector": {"app": name},
            "ports": ports.iter().map(|port| json!({
                "name": format!("p{port}"), "port": port, "protocol": "TCP"
            })).collect::<Vec<_>>()
        }
    })
}

/// The same as a typed Service.
pub fn typed_lb_service(name: &str, ports: &[i32]) -> Service {
    serde_json::from_value(lb_service(name, ports)).expect("a Service")
}

/// Changing Services the same way in every harness that has a client.
pub trait ServiceEdits {
    fn client(&self) -> &kube::Client;

    async fn patch_service(&self, namespace: &str, name: &str, patch: Value) {
        Api::<Service>::namespaced(self.client().clone(), namespace)
            .patch(name, &PatchParams::default(), &Patch::Merge(patch))
            .await
            .expect("the Service is patched");
    }

    async fn delete_service(&self, namespace: &str, name: &str) {
        Api::<Service>::namespaced(self.client().clone(), namespace)
            .delete(name, &DeleteParams::default())
            .await
            .expect("the Service is deleted");
    }
}

//! The Node cache holds what the controllers read and not what they never
//! do: an informer trimmed as `vcd-ccm run` trims its Nodes drops managed
//! fields, pulled images and volumes, and keeps addresses, conditions,
//! labels and the spec.

use k8s_openapi::api::core::v1::Node;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use kubesim::KubeSim;
use serde_json::json;
use vcd_ccm::controllers::Informer;
use vcd_ccm::controllers::node;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_nodes_keep_what_controllers_read_and_drop_the_rest() {
    let kube = KubeSim::start().await.expect("kubesim starts");
    kube.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": "worker-0",
            "labels": {"kubernetes.io/hostname": "worker-0"},
            "managedFields": [{"manager": "kubelet", "operation": "Update",
                "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {}}}]
        },
        "spec": {"providerID": "vmware-cloud-director://urn:vcloud:vm:1"},
        "status": {
            "addresses": [{"type": "InternalIP", "address": "10.0.0.11"}],
            "conditions": [{"type": "Ready", "status": "True"}],
            "images": [{"names": ["registry.example/app@sha256:00"], "sizeBytes": 1000}],
            "volumesInUse": ["kubernetes.io/csi/disk-1"]
        }
    }))
    .expect("the Node is seeded");
    let client = kube.client().expect("a client");
    let stored = Api::<Node>::all(client.clone())
        .get("worker-0")
        .await
        .expect("the stored Node");
    assert!(
        stored.metadata.managed_fields.is_some(),
        "the API server has them"
    );
    assert!(
        stored
            .status
            .as_ref()
            .and_then(|s| s.images.as_ref())
            .is_some()
    );
    let informer = Informer::new(Api::<Node>::all(client)).trimmed(node::trim_cached);
    let store = informer.store();
    let listed = informer.listed();
    let running = tokio::spawn(informer.run());
    assert!(listed.wait().await, "the informer lists");
    let cached = store
        .get(&ObjectRef::new("worker-0"))
        .expect("worker-0 is cached");
    running.abort();

    assert_eq!(cached.metadata.managed_fields, None);
    let status = cached.status.as_ref().expect("status");
    assert_eq!(status.images, None);
    assert_eq!(status.volumes_in_use, None);
    assert_eq!(status.addresses.as_ref().map(Vec::len), Some(1));
    assert_eq!(status.conditions.as_ref().map(Vec::len), Some(1));
    assert!(cached.labels().contains_key("kubernetes.io/hostname"));
    assert_eq!(
        cached.spec.as_ref().and_then(|s| s.provider_id.as_deref()),
        Some("vmware-cloud-director://urn:vcloud:vm:1")
    );
}

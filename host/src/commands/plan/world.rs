//! The cluster as `vcd-ccm plan` reads it: one listing of Services, Nodes,
//! EndpointSlices and Namespaces, in the caches the service controller
//! computes a Service's inputs from.

use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::ListParams;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use crate::controllers::service::Caches;

/// What a plan reads from Kubernetes.
pub struct World {
    pub services: Vec<Service>,
    pub caches: Caches,
}

impl World {
    pub async fn list(client: &Client) -> Result<World, kube::Error> {
        let services = Api::<Service>::all(client.clone())
            .list(&ListParams::default())
            .await?
            .items;
        Ok(World {
            services,
            caches: Caches {
                nodes: store(client).await?,
                endpoint_slices: store::<EndpointSlice>(client).await?,
                namespaces: store::<Namespace>(client).await?,
            },
        })
    }
}

/// Every object of `K`, in a store as the controller's informers keep them.
async fn store<K>(client: &Client) -> Result<Store<K>, kube::Error>
where
    K: Resource<DynamicType = ()>
        + Clone
        + std::fmt::Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let (reader, mut writer) = reflector::store();
    let listed = Api::<K>::all(client.clone())
        .list(&ListParams::default())
        .await?;
    for object in listed.items {
        writer.apply_watcher_event(&watcher::Event::Apply(object));
    }
    Ok(reader)
}

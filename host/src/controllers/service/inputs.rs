//! What the load balancer is given for a Service, from the controller's
//! caches: the Nodes that serve it and its spec (with its Namespace's
//! labels and its ready endpoints). `vcd-ccm plan` computes them the same
//! way from a listing.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Namespace, Node, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::{ObjectRef, Store};

use super::endpoints::{ReadyEndpoints, has_health_check_node_port, is_local, ready_endpoints};
use super::predicates::in_node_set;
use super::spec::{NodeKey, service_spec};
use crate::lb::ServiceSpec;

/// The caches a Service's inputs are read from.
#[derive(Clone)]
pub struct Caches {
    /// Every Node.
    pub nodes: Store<Node>,
    /// Every EndpointSlice (`Local` Services are served by the Nodes with
    /// a ready endpoint).
    pub endpoint_slices: Store<EndpointSlice>,
    /// Every Namespace (policies select on their labels).
    pub namespaces: Store<Namespace>,
}

impl Caches {
    /// The Nodes that may serve load balancers, sorted.
    pub fn node_set(&self) -> Vec<NodeKey> {
        let mut nodes: Vec<NodeKey> = self
            .nodes
            .state()
            .iter()
            .filter(|n| in_node_set(n))
            .map(|n| NodeKey::of(n))
            .collect();
        nodes.sort();
        nodes
    }

    /// The nodes a Service's load balancer sends traffic to: the node set,
    /// narrowed to the nodes with a ready endpoint for `Local` Services
    /// unless the load balancer `probes` their `healthCheckNodePort`.
    pub fn members_of(&self, service: &Service, probes: bool) -> Vec<NodeKey> {
        let mut nodes = self.node_set();
        if is_local(service) && !(probes && has_health_check_node_port(service)) {
            let ready = self.ready_endpoints_of(service);
            nodes.retain(|n| ready.nodes.contains(&n.name));
        }
        nodes
    }

    /// The Service's ready endpoints and the Nodes they run on.
    pub fn ready_endpoints_of(&self, service: &Service) -> ReadyEndpoints {
        ready_endpoints(
            &self.endpoint_slices,
            service.metadata.namespace.as_deref().unwrap_or_default(),
            service.metadata.name.as_deref().unwrap_or_default(),
        )
    }

    /// The Service as the load balancer sees it.
    pub fn spec_of(&self, service: &Service) -> ServiceSpec {
        ServiceSpec {
            ready_endpoints: self.ready_endpoints_of(service).count,
            ..service_spec(service, self.namespace_labels(service).unwrap_or_default())
        }
    }

    /// The labels of the Service's Namespace; `None` until it is cached.
    pub fn namespace_labels(&self, service: &Service) -> Option<BTreeMap<String, String>> {
        let namespace = service.metadata.namespace.as_deref().unwrap_or_default();
        self.namespaces
            .get(&ObjectRef::new(namespace))
            .map(|ns| ns.metadata.labels.clone().unwrap_or_default())
    }
}

//! kubesim: an in-memory Kubernetes API server for controller tests and demos.
//!
//! It serves the REST API for the kinds a cloud-controller-manager touches
//! (Services, Nodes, Namespaces, ConfigMaps, Secrets, Events, Leases) over plain
//! HTTP on loopback, with the behaviour controllers depend on: resourceVersions,
//! watches that resume or answer 410 Gone, 409 conflicts, finalizers and
//! deletionTimestamp, status subresources, merge/JSON/strategic-merge patches,
//! label and field selectors, Service IP/NodePort allocation, and server-side
//! printing (the `Table` columns `kubectl get` shows).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::Service;
//! let sim = kubesim::KubeSim::start().await?;
//! let services: kube::Api<Service> = kube::Api::default_namespaced(sim.client()?);
//! let kubernetes = services.get("kubernetes").await?;
//! assert_eq!(kubernetes.spec.unwrap().cluster_ip.as_deref(), Some("10.96.0.1"));
//! sim.faults().fail_writes("services", 1, 500);
//! # Ok(()) }
//! ```

mod access;
mod error;
mod faults;
mod http;
mod kubeconfig;
mod object;
mod patch;
mod printers;
mod resources;
mod rules;
mod selectors;
mod sim;
mod store;

pub use error::{ApiError, FieldError, FieldErrorKind, ObjectRef, SimError};
pub use faults::{Faults, WriteFault, WriteVerb};
pub use http::RequestRecord;
pub use sim::{Config, KubeSim};

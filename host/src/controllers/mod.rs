//! The Kubernetes side, with the semantics of k8s.io/cloud-provider: the
//! service controller, the cloud node controller, the cloud node lifecycle
//! controller, the Events they write and leader election.
//! `README.md` beside this file describes each one.

pub mod drain;
pub mod enabled;
pub mod events;
pub mod informer;
pub mod leader;
pub mod lifecycle;
pub mod node;
mod node_helpers;
pub mod ready;
pub mod service;
pub mod supervise;
mod workqueue;

pub use drain::{Drained, SyncGate};
pub use enabled::EnabledControllers;
pub use events::{EventRecorder, EventType};
pub use informer::Informer;
pub use ready::{CacheSync, SyncedFlag};

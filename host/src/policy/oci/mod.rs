//! Policies from an OCI registry: a `policies.yaml` entry may name
//! `image: oci://registry/repository@sha256:<digest>` instead of a file.
//!
//! The manifest's bytes are checked against the reference's digest, the
//! one `application/wasm` layer against the digest and size the manifest
//! gives, and the component is then loaded as a file's would be (its sha256
//! as the pin). A small distribution client on the process's `reqwest`:
//! [`reference`] (parsing), [`auth`] (Docker config credentials),
//! [`transport`] (requests, the Basic or Bearer challenge, bounded bodies),
//! [`artifact`] (the CNCF wasm artifact layout), [`pull`], [`push`],
//! [`cache`] (pulled components by digest), [`images`] (the CCM's side:
//! `pullSecret`s through the Kubernetes API), [`tools`] (the command line's
//! side) and [`entry`] (the entry's fields).

pub mod artifact;
pub mod auth;
pub mod cache;
pub mod entry;
pub mod errors;
pub mod images;
pub mod pull;
pub mod push;
pub mod reference;
mod runtime;
pub mod tools;
pub mod transport;

pub use artifact::MAX_COMPONENT_BYTES;
pub use entry::ComponentSource;
pub use errors::RegistryError;
pub use images::{ImageSource, PullError, SecretReader};
pub use reference::{Reference, ReferenceError};
pub use runtime::on_registry_runtime;

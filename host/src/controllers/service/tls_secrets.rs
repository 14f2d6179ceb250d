//! The load balancer's view of Kubernetes TLS Secrets: one GET of the named
//! Secret in the Service's namespace, no list or watch, so the role needs
//! only `get` on Secrets and no Secret is cached in the process. The data
//! goes from the answer straight into redacting wrappers.

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};

use crate::lb::tls::{KeyBytes, SecretData, SecretReadError, TlsSecrets};

/// Reads Secrets through the controller's Kubernetes client.
pub struct KubeTlsSecrets {
    client: Client,
}

impl KubeTlsSecrets {
    /// Secrets read through `client`.
    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

impl TlsSecrets for KubeTlsSecrets {
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<SecretData>, SecretReadError>> {
        Box::pin(async move {
            let api: Api<Secret> = Api::namespaced(self.client.clone(), namespace);
            let found = api
                .get_opt(name)
                .await
                .map_err(|error| SecretReadError(error.to_string()))?;
            Ok(found.map(|secret| {
                let mut data = secret.data.unwrap_or_default();
                SecretData {
                    secret_type: secret.type_.unwrap_or_else(|| "Opaque".to_string()),
                    certificate: data.remove("tls.crt").map(|b| b.0),
                    key: data.remove("tls.key").map(|b| KeyBytes::new(b.0)),
                }
            }))
        })
    }
}

//! The credential Secret as the store of one-time refresh tokens: read
//! through the Kubernetes API (the mounted file lags by a kubelet sync), and
//! written back with an update whose resourceVersion is the one read. A
//! token VCD refuses fails `/readyz` and gets a Warning Event on the Secret.

use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ObjectReference, Secret as KubeSecret};
use kube::api::PostParams;
use kube::{Api, Client};
use tokio::sync::watch;

use crate::controllers::{EventRecorder, EventType};
use crate::serve::Check;
use crate::vcd::{Rotation, Secret, StoreError, Stored, TokenHealth, TokenStore};

/// The key of the refresh token in the upstream Secret.
const KEY: &str = "refreshToken";

/// Which Secret holds the credentials (`--credentials-secret`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialSecret {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl CredentialSecret {
    /// `<namespace>/<name>`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.split_once('/') {
            Some((namespace, name))
                if !namespace.is_empty() && !name.is_empty() && !name.contains('/') =>
            {
                Ok(Self {
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                })
            }
            _ => Err(format!("{text:?} is not <namespace>/<name>")),
        }
    }

    fn reference(&self) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".to_string()),
            kind: Some("Secret".to_string()),
            namespace: Some(self.namespace.clone()),
            name: Some(self.name.clone()),
            ..ObjectReference::default()
        }
    }
}

/// [`TokenStore`] on the credential Secret.
pub struct SecretTokenStore {
    api: Api<KubeSecret>,
    secret: CredentialSecret,
    shown: String,
    /// The Secret as last read: an update sends it back whole.
    last: Mutex<Option<KubeSecret>>,
}

impl SecretTokenStore {
    pub fn new(client: Client, secret: CredentialSecret) -> Self {
        Self {
            api: Api::namespaced(client, &secret.namespace),
            shown: format!("Secret {}/{}", secret.namespace, secret.name),
            secret,
            last: Mutex::new(None),
        }
    }

    fn keep(&self, secret: &KubeSecret) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(secret.clone());
    }

    async fn read_now(&self) -> Result<Stored, StoreError> {
        let secret = self.api.get(&self.secret.name).await.map_err(failed)?;
        let token = secret
            .data
            .as_ref()
            .and_then(|data| data.get(KEY))
            .and_then(|bytes| String::from_utf8(bytes.0.clone()).ok())
            .map(|text| text.trim().to_string())
            .filter(|text| !text.is_empty())
            .map(Secret::new);
        let version = secret.metadata.resource_version.clone().unwrap_or_default();
        self.keep(&secret);
        Ok(Stored { token, version })
    }

    async fn write_now(&self, token: &Secret, version: &str) -> Result<String, StoreError> {
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let Some(mut secret) =
            last.filter(|s| s.metadata.resource_version.as_deref() == Some(version))
        else {
            return Err(StoreError::Conflict);
        };
        secret.string_data = None;
        secret.data.get_or_insert_with(Default::default).insert(
            KEY.to_string(),
            ByteString(token.expose().as_bytes().to_vec()),
        );
        let written = self
            .api
            .replace(&self.secret.name, &PostParams::default(), &secret)
            .await
            .map_err(|error| match &error {
                kube::Error::Api(status) if status.code == 409 => StoreError::Conflict,
                _ => failed(error),
            })?;
        self.keep(&written);
        Ok(written.metadata.resource_version.unwrap_or_default())
    }
}

/// A Kubernetes error as text: the API server's message, never the body sent.
fn failed(error: kube::Error) -> StoreError {
    StoreError::Failed(match error {
        kube::Error::Api(status) => format!("HTTP {}: {}", status.code, status.message),
        other => other.to_string(),
    })
}

impl TokenStore for SecretTokenStore {
    fn name(&self) -> &str {
        &self.shown
    }

    fn read(&self) -> BoxFuture<'_, Result<Stored, StoreError>> {
        self.read_now().boxed()
    }

    fn write<'a>(
        &'a self,
        token: &'a Secret,
        version: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        self.write_now(token, version).boxed()
    }
}

/// What to tell an operator whose token VCD refused.
fn advice(store: &str, reason: &str) -> String {
    format!(
        "VCD refused the refresh token in {store} ({reason}). A service account's token works once: an org administrator issues a new one (Administration > Service Accounts, or the device flow at /oauth/tenant/<org>/device_authorization) and writes it to refreshToken in {store}; the CCM picks it up at its next login"
    )
}

/// The `vcd-credentials` readiness check: failing while VCD refuses the token.
pub fn readiness(rotation: &Rotation) -> Check {
    let health = rotation.health();
    let store = rotation.store_name().to_string();
    Check::new("vcd-credentials", move || match &*health.borrow() {
        TokenHealth::Refused(reason) => Err(advice(&store, reason)),
        _ => Ok(()),
    })
}

/// Publishes a Warning Event on the Secret each time VCD starts refusing
/// its token; runs for the life of the process.
pub async fn report_refusals(
    mut health: watch::Receiver<TokenHealth>,
    secret: CredentialSecret,
    store: String,
    recorder: EventRecorder,
) {
    let mut was_refused = false;
    while health.changed().await.is_ok() {
        let now = health.borrow_and_update().clone();
        match now {
            TokenHealth::Refused(reason) if !was_refused => {
                was_refused = true;
                recorder
                    .publish(
                        &secret.reference(),
                        EventType::Warning,
                        "RefreshTokenRefused",
                        &advice(&store, &reason),
                    )
                    .await;
            }
            TokenHealth::Refused(_) => {}
            _ => was_refused = false,
        }
    }
}

/// The rotation on `secret`, exchanging only while `leading` is `true`.
pub fn rotation(
    client: Client,
    secret: CredentialSecret,
    leading: watch::Receiver<bool>,
) -> Arc<Rotation> {
    Arc::new(Rotation::new(
        Arc::new(SecretTokenStore::new(client, secret)),
        leading,
    ))
}

#[cfg(test)]
mod tests {
    use super::CredentialSecret;

    #[test]
    fn the_flag_names_a_namespace_and_a_name() {
        assert_eq!(
            CredentialSecret::parse("kube-system/vcloud-basic-auth").unwrap(),
            CredentialSecret {
                namespace: "kube-system".into(),
                name: "vcloud-basic-auth".into()
            }
        );
        for bad in ["", "a", "/b", "a/", "a/b/c"] {
            assert!(CredentialSecret::parse(bad).is_err(), "{bad}");
        }
    }
}

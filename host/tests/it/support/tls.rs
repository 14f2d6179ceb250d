//! Kubernetes TLS Secrets for the certificate tests: generated key pairs,
//! Secrets written through kubesim, and what vcdsim's certificate library
//! and virtual services hold.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::Api;
use kube::api::PostParams;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::support::cluster::{Cluster, lb_service};

pub const TLS_SECRET: &str = "vcd-ccm.io/tls-secret";

/// A certificate and its private key, PEM.
pub struct KeyPair {
    pub cert: String,
    pub key: String,
}

impl KeyPair {
    pub fn generate(host: &str) -> Self {
        let pair = rcgen::generate_simple_self_signed(vec![host.to_string()]).expect("a pair");
        Self {
            cert: pair.cert.pem(),
            key: pair.signing_key.serialize_pem(),
        }
    }

    /// The first 12 hex digits of the certificate's SHA-256, as aliases carry them.
    pub fn digest12(&self) -> String {
        hex::encode(Sha256::digest(self.cert.as_bytes()))[..12].to_string()
    }
}

/// An uploaded library item: (id, alias, description).
pub type Item = (String, String, String);

/// A LoadBalancer Service with one HTTPS port (443 → 30443) naming `annotation`.
pub fn https_service(name: &str, node_port: i32, annotation: &str) -> serde_json::Value {
    let mut body = lb_service(name, &[(443, node_port)]);
    body["spec"]["ports"][0]["appProtocol"] = json!("https");
    body["metadata"]["annotations"] = json!({TLS_SECRET: annotation});
    body
}

impl Cluster {
    fn secrets(&self, namespace: &str) -> Api<Secret> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Creates or replaces the Secret with `data` and `type`.
    pub async fn put_secret(&self, namespace: &str, name: &str, kind: &str, data: &[(&str, &str)]) {
        let data: BTreeMap<String, ByteString> = data
            .iter()
            .map(|(k, v)| (k.to_string(), ByteString(v.as_bytes().to_vec())))
            .collect();
        let api = self.secrets(namespace);
        let mut secret: Secret = serde_json::from_value(json!({
            "metadata": {"name": name},
            "type": kind,
        }))
        .expect("a Secret");
        secret.data = Some(data);
        match api.get_opt(name).await.expect("a read") {
            None => drop(
                api.create(&PostParams::default(), &secret)
                    .await
                    .expect("created"),
            ),
            Some(old) => {
                secret.metadata.resource_version = old.metadata.resource_version;
                drop(
                    api.replace(name, &PostParams::default(), &secret)
                        .await
                        .expect("replaced"),
                )
            }
        }
    }

    /// Creates or replaces a `kubernetes.io/tls` Secret holding `pair`.
    pub async fn put_tls_secret(&self, namespace: &str, name: &str, pair: &KeyPair) {
        let data = [
            ("tls.crt", pair.cert.as_str()),
            ("tls.key", pair.key.as_str()),
        ];
        self.put_secret(namespace, name, "kubernetes.io/tls", &data)
            .await;
    }

    /// The kube-system Namespace's uid: the identity in this cluster's tags.
    pub async fn kube_identity(&self) -> String {
        Api::<Namespace>::all(self.client.clone())
            .get("kube-system")
            .await
            .expect("kube-system")
            .metadata
            .uid
            .expect("a uid")
    }

    /// Every item of the org's certificate library.
    pub fn library(&self) -> Vec<Item> {
        self.vcd.with_world(|w| {
            w.certificates
                .iter()
                .map(|c| {
                    (
                        c.item.id.clone().unwrap_or_default(),
                        c.item.alias.clone(),
                        c.item.description.clone().unwrap_or_default(),
                    )
                })
                .collect()
        })
    }

    /// The library items this cluster uploaded from Secrets.
    pub fn uploads(&self) -> Vec<Item> {
        self.library()
            .into_iter()
            .filter(|(_, _, d)| d.contains(" secret="))
            .collect()
    }

    /// The certificate ids the Service's virtual services use.
    pub fn certificates_of(&self, uid: &str) -> Vec<String> {
        certificates_of(&self.vcd, uid)
    }

    /// VCD requests other than reads.
    pub fn vcd_writes(&self) -> usize {
        self.vcd
            .requests()
            .iter()
            // A login (a session renewed meanwhile) changes nothing in VCD.
            .filter(|r| r.method != "GET" && !r.template.contains("/sessions"))
            .count()
    }
}

/// The certificate ids the virtual services of the Service `uid` use.
pub fn certificates_of(vcd: &vcdsim::Sim, uid: &str) -> Vec<String> {
    let needle = format!(" uid={uid}");
    vcd.with_world(|w| {
        w.virtual_services
            .iter()
            .filter(|v| {
                v.description
                    .as_deref()
                    .unwrap_or_default()
                    .contains(&needle)
            })
            .filter_map(|v| v.certificate_ref.as_ref().map(|r| r.id.clone()))
            .collect()
    })
}

//! Pulling a pinned wasm artifact: the manifest by its digest, checked
//! against it, then the one layer, checked against the manifest's digest
//! and size, then for the wasm magic.

use reqwest::StatusCode;
use reqwest::header::ACCEPT;

use super::artifact::{self, MANIFEST_MEDIA_TYPE, MAX_MANIFEST_BYTES};
use super::auth::Credentials;
use super::errors::RegistryError;
use super::reference::Reference;
use super::transport::{Access, Session, error_text, read_limited};
use crate::policy::loader::sha256_hex;

/// The first bytes of every WebAssembly binary, module or component.
const WASM_MAGIC: &[u8] = b"\0asm";

/// A component pulled and verified.
#[derive(Debug)]
pub struct Pulled {
    /// The manifest's sha256 (lowercase hex): the reference's digest.
    pub manifest_digest: String,
    /// The manifest's bytes, which hash to `manifest_digest`.
    pub manifest: Vec<u8>,
    /// The component's bytes, which hash to the layer digest the manifest names.
    pub component: Vec<u8>,
    /// The component's sha256 (lowercase hex): the layer's digest, and the
    /// pin the loader checks again.
    pub component_sha256: String,
}

/// Pulls the artifact `reference` pins (it must carry a digest).
pub async fn pull(
    reference: &Reference,
    credentials: Option<Credentials>,
) -> Result<Pulled, RegistryError> {
    let digest = reference
        .digest
        .clone()
        .expect("pulls are of pinned references");
    let mut session = Session::new(reference, credentials, Access::Pull)?;
    let manifest_name = format!("manifest sha256:{digest}");
    let url = session.url(&format!("manifests/sha256:{digest}"));
    let response = session
        .send(|http| http.get(&url).header(ACCEPT, MANIFEST_MEDIA_TYPE))
        .await?;
    let response = success(&session, response, &manifest_name).await?;
    let manifest = read_limited(response, &manifest_name, MAX_MANIFEST_BYTES).await?;
    verify(&manifest_name, &digest, &manifest)?;
    let shown = reference.to_string();
    let layer = artifact::component_layer(&shown, &manifest)?;
    let layer_hex = layer.sha256().expect("checked a sha256 digest").to_string();
    let layer_name = format!("layer {} of {shown}", layer.digest);
    let url = session.url(&format!("blobs/{}", layer.digest));
    let response = session.send(|http| http.get(&url)).await?;
    let response = success(&session, response, &layer_name).await?;
    let component = read_limited(response, &layer_name, layer.size).await?;
    verify(&layer_name, &layer_hex, &component)?;
    if !component.starts_with(WASM_MAGIC) {
        return Err(RegistryError::NotWasm {
            reference: shown,
            reason: "its layer does not start with the WebAssembly magic bytes \\0asm".into(),
        });
    }
    Ok(Pulled {
        manifest_digest: digest,
        manifest,
        component,
        component_sha256: layer_hex,
    })
}

/// `bytes` hash to `expected` (hex), or the mismatch naming `what`.
pub fn verify(what: &str, expected: &str, bytes: &[u8]) -> Result<(), RegistryError> {
    let actual = sha256_hex(bytes);
    if actual != expected {
        return Err(RegistryError::DigestMismatch {
            what: what.to_string(),
            expected: expected.to_string(),
            actual,
        });
    }
    Ok(())
}

/// The response if it succeeded; a 404 is [`RegistryError::NotFound`].
async fn success(
    session: &Session,
    response: reqwest::Response,
    what: &str,
) -> Result<reqwest::Response, RegistryError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    if status == StatusCode::NOT_FOUND {
        return Err(RegistryError::NotFound {
            what: what.to_string(),
            repository: session.repository(),
        });
    }
    Err(RegistryError::Status {
        what: format!("GET {what}"),
        status: status.as_u16(),
        message: error_text(response).await,
    })
}

//! Publishing a component as a wasm artifact: the layer and the config as
//! blobs (each skipped when the repository has it), then the manifest, by
//! tag when the target names one, else by digest.

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, LOCATION};

use super::artifact::{
    Artifact, ComponentInterfaces, Descriptor, MANIFEST_MEDIA_TYPE, MAX_COMPONENT_BYTES,
};
use super::auth::Credentials;
use super::errors::RegistryError;
use super::reference::Reference;
use super::transport::{Access, Session, error_text};
use crate::policy::loader::sha256_hex;

/// Pushes `component` to `target` (a repository, with or without a tag)
/// and returns the reference pinned by the manifest's digest.
pub async fn push(
    target: &Reference,
    credentials: Option<Credentials>,
    component: &[u8],
    interfaces: ComponentInterfaces,
) -> Result<Reference, RegistryError> {
    if component.len() as u64 > MAX_COMPONENT_BYTES {
        return Err(RegistryError::TooLarge {
            what: "the component".into(),
            size: component.len() as u64,
            limit: MAX_COMPONENT_BYTES,
        });
    }
    let artifact = Artifact::new(component, interfaces);
    let mut session = Session::new(target, credentials, Access::Push)?;
    upload(&mut session, component).await?;
    upload(&mut session, &artifact.config).await?;
    let digest = sha256_hex(&artifact.manifest);
    let name = target
        .tag
        .clone()
        .unwrap_or_else(|| format!("sha256:{digest}"));
    let url = session.url(&format!("manifests/{name}"));
    let response = session
        .send(|http| {
            http.put(&url)
                .header(CONTENT_TYPE, MANIFEST_MEDIA_TYPE)
                .body(artifact.manifest.clone())
        })
        .await?;
    expect(
        response,
        StatusCode::CREATED,
        &format!("PUT manifest {name}"),
    )
    .await?;
    Ok(target.with_digest(&digest))
}

/// Uploads `bytes` as a blob in one request, unless the repository has it.
async fn upload(session: &mut Session, bytes: &[u8]) -> Result<(), RegistryError> {
    let digest = Descriptor::of("", bytes).digest;
    let blob_url = session.url(&format!("blobs/{digest}"));
    let head = session.send(|http| http.head(&blob_url)).await?;
    if head.status().is_success() {
        return Ok(());
    }
    let start_url = session.url("blobs/uploads/");
    let started = session.send(|http| http.post(&start_url)).await?;
    let what = format!("POST blob upload for {digest}");
    let started = expect(started, StatusCode::ACCEPTED, &what).await?;
    let location = started
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| RegistryError::Protocol {
            what: what.clone(),
            message: "the answer has no Location to upload to".into(),
        })?;
    let location = session.resolve(location);
    let separator = if location.contains('?') { '&' } else { '?' };
    let put_url = format!("{location}{separator}digest={digest}");
    let finished = session
        .send(|http| {
            http.put(&put_url)
                .header(CONTENT_TYPE, "application/octet-stream")
                .body(bytes.to_vec())
        })
        .await?;
    expect(finished, StatusCode::CREATED, &format!("PUT blob {digest}")).await?;
    Ok(())
}

async fn expect(
    response: reqwest::Response,
    wanted: StatusCode,
    what: &str,
) -> Result<reqwest::Response, RegistryError> {
    let status = response.status();
    if status == wanted {
        return Ok(response);
    }
    Err(RegistryError::Status {
        what: what.to_string(),
        status: status.as_u16(),
        message: error_text(response).await,
    })
}

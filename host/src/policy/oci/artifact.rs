//! The wasm OCI artifact (CNCF TAG Runtime's layout, which wasmCloud and
//! Kubewarden use): an OCI image manifest whose config has media type
//! `application/vnd.wasm.config.v0+json` and whose one layer, of media type
//! `application/wasm`, is the component.

use serde::{Deserialize, Serialize};

use super::errors::RegistryError;
use crate::policy::loader::sha256_hex;

/// The manifest's media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The config's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The component layer's media type.
pub const WASM_MEDIA_TYPE: &str = "application/wasm";
/// The largest component pulled or pushed: 64 MiB, well above the ~18 MB
/// of a componentize-py policy.
pub const MAX_COMPONENT_BYTES: u64 = 64 << 20;
/// The largest manifest read; a one-layer manifest is under 1 KiB.
pub const MAX_MANIFEST_BYTES: u64 = 256 << 10;

/// A blob's reference in a manifest.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// The blob's media type.
    pub media_type: String,
    /// `sha256:<64 hex>`.
    pub digest: String,
    /// The blob's size in bytes.
    pub size: u64,
}

impl Descriptor {
    /// The descriptor of `bytes` as a blob of `media_type`.
    pub fn of(media_type: &str, bytes: &[u8]) -> Descriptor {
        Descriptor {
            media_type: media_type.to_string(),
            digest: format!("sha256:{}", sha256_hex(bytes)),
            size: bytes.len() as u64,
        }
    }

    /// The digest's hex, when it is a sha256 digest.
    pub fn sha256(&self) -> Option<&str> {
        self.digest
            .strip_prefix("sha256:")
            .filter(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
    }
}

/// An OCI image manifest, the fields a wasm artifact uses.
#[derive(Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageManifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST_MEDIA_TYPE`]; optional in what is read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers; a wasm artifact has one.
    pub layers: Vec<Descriptor>,
}

/// The config blob: what the component is, as the layout describes it.
/// Without a creation time, so the same component always has the same digest.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// `wasm`.
    pub architecture: &'static str,
    /// `wasip2`: the WASI version of a component.
    pub os: &'static str,
    /// The layers' digests.
    pub layer_digests: Vec<String>,
    /// The component's interfaces.
    pub component: ComponentInterfaces,
}

/// A component's imports and exports, by interface name.
#[derive(Debug, Serialize)]
pub struct ComponentInterfaces {
    /// What it imports.
    pub imports: Vec<String>,
    /// What it exports.
    pub exports: Vec<String>,
}

/// The artifact's config and manifest as bytes, ready to push.
pub struct Artifact {
    /// The config blob.
    pub config: Vec<u8>,
    /// The manifest; its sha256 is the artifact's digest.
    pub manifest: Vec<u8>,
}

impl Artifact {
    /// The artifact holding `component`, whose interfaces are `interfaces`.
    pub fn new(component: &[u8], interfaces: ComponentInterfaces) -> Artifact {
        let layer = Descriptor::of(WASM_MEDIA_TYPE, component);
        let config = WasmConfig {
            architecture: "wasm",
            os: "wasip2",
            layer_digests: vec![layer.digest.clone()],
            component: interfaces,
        };
        let config = serde_json::to_vec(&config).expect("the config serialises");
        let manifest = ImageManifest {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.into()),
            config: Descriptor::of(CONFIG_MEDIA_TYPE, &config),
            layers: vec![layer],
        };
        let manifest = serde_json::to_vec(&manifest).expect("the manifest serialises");
        Artifact { config, manifest }
    }
}

/// The component layer of the manifest `bytes`, checked to be a wasm
/// artifact: an OCI image manifest with one `application/wasm` layer of a
/// sha256 digest and at most [`MAX_COMPONENT_BYTES`].
pub fn component_layer(reference: &str, bytes: &[u8]) -> Result<Descriptor, RegistryError> {
    let not_wasm = |reason: String| RegistryError::NotWasm {
        reference: reference.to_string(),
        reason,
    };
    let manifest: ImageManifest = serde_json::from_slice(bytes)
        .map_err(|e| not_wasm(format!("not an OCI image manifest ({e})")))?;
    if manifest.schema_version != 2 {
        return Err(not_wasm(format!(
            "schemaVersion is {}, not 2",
            manifest.schema_version
        )));
    }
    if let Some(media_type) = manifest
        .media_type
        .as_deref()
        .filter(|m| *m != MANIFEST_MEDIA_TYPE)
    {
        return Err(not_wasm(format!(
            "its media type is {media_type:?}, not {MANIFEST_MEDIA_TYPE}"
        )));
    }
    let [layer] = <[Descriptor; 1]>::try_from(manifest.layers).map_err(|layers| {
        not_wasm(format!(
            "it has {} layers; a policy artifact has one {WASM_MEDIA_TYPE} layer",
            layers.len()
        ))
    })?;
    if layer.media_type != WASM_MEDIA_TYPE {
        return Err(not_wasm(format!(
            "its layer's media type is {:?}, not {WASM_MEDIA_TYPE}",
            crate::text::sanitize(&layer.media_type, 128)
        )));
    }
    if layer.sha256().is_none() {
        return Err(not_wasm("its layer's digest is not sha256:<64 hex>".into()));
    }
    if layer.size > MAX_COMPONENT_BYTES {
        return Err(RegistryError::TooLarge {
            what: format!("the component layer of {reference}"),
            size: layer.size,
            limit: MAX_COMPONENT_BYTES,
        });
    }
    Ok(layer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_artifact_has_one_wasm_layer_and_reads_back() {
        let component = b"\0asm\x0d\0\x01\0";
        let interfaces = ComponentInterfaces {
            imports: vec![],
            exports: vec!["vcd:lb-policy/policy@0.2.0".into()],
        };
        let artifact = Artifact::new(component, interfaces);
        let layer = component_layer("oci://r/p", &artifact.manifest).unwrap();
        assert_eq!(layer, Descriptor::of(WASM_MEDIA_TYPE, component));
        let manifest: serde_json::Value = serde_json::from_slice(&artifact.manifest).unwrap();
        assert_eq!(manifest["config"]["mediaType"], CONFIG_MEDIA_TYPE);
        let config: serde_json::Value = serde_json::from_slice(&artifact.config).unwrap();
        assert_eq!(config["layerDigests"][0], layer.digest.as_str());
    }

    #[test]
    fn other_manifests_are_refused_with_the_difference() {
        let layer = |media_type: &str, size: u64| serde_json::json!({"mediaType": media_type, "digest": format!("sha256:{}", "a".repeat(64)), "size": size});
        let manifest = |layers: Vec<serde_json::Value>| {
            serde_json::to_vec(&serde_json::json!({"schemaVersion": 2,
                "config": layer(CONFIG_MEDIA_TYPE, 2), "layers": layers}))
            .unwrap()
        };
        let cases = [
            (manifest(vec![]), "it has 0 layers"),
            (
                manifest(vec![layer("application/vnd.oci.image.layer.v1.tar+gzip", 9)]),
                "its layer's media type is \"application/vnd.oci.image.layer.v1.tar+gzip\"",
            ),
            (
                manifest(vec![layer(WASM_MEDIA_TYPE, MAX_COMPONENT_BYTES + 1)]),
                "over the limit of 67108864 bytes",
            ),
            (
                br#"{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []}"#.to_vec(),
                "not an OCI image manifest",
            ),
        ];
        for (bytes, expected) in cases {
            let error = component_layer("oci://r/p", &bytes)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{error}");
        }
    }
}

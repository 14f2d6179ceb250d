//! Org-scoped library objects: certificates and runtime defined entities.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Ref;
use crate::strict::{ReadOnly, definition};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct CertificateItem {
    pub id: Option<String>,
    pub alias: String,
    pub description: Option<String>,
    pub certificate: String,
    /// Write-only: never returned.
    #[serde(skip_serializing)]
    pub private_key: Option<String>,
    #[serde(skip_serializing)]
    pub private_key_passphrase: Option<String>,
}
definition!(CertificateItem, "CertificateLibraryItem", serialize);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Certificate {
    pub org_id: String,
    pub item: CertificateItem,
}

/// The envelope has a fixed schema; `entity` is the type's own JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct DefinedEntity {
    pub id: Option<String>,
    pub entity_type: Option<String>,
    pub name: String,
    pub external_id: Option<String>,
    pub entity: Value,
    pub state: Option<String>,
    /// Mirrors `state` on reads; ignored on writes, as `state` is.
    #[serde(default, skip_serializing)]
    pub entity_state: ReadOnly,
    pub owner: Option<Ref>,
    pub org: Option<Ref>,
}
definition!(DefinedEntity, "DefinedEntity", serialize);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entity {
    pub org_id: String,
    /// Bumped on every write; the ETag is derived from it.
    pub revision: u64,
    pub body: DefinedEntity,
}

impl Entity {
    pub fn etag(&self) -> String {
        format!(
            "\"{}-{}\"",
            crate::ids::uuid_of(self.body.id.as_deref().unwrap_or("")),
            self.revision
        )
    }
}

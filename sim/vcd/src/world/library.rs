//! Org-scoped library objects: certificates and runtime defined entities.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Ref;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Certificate {
    pub org_id: String,
    pub item: CertificateItem,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinedEntity {
    pub id: Option<String>,
    pub entity_type: Option<String>,
    pub name: String,
    pub external_id: Option<String>,
    pub entity: Value,
    pub state: Option<String>,
    pub owner: Option<Ref>,
    pub org: Option<Ref>,
}

#[derive(Debug, Clone, Serialize)]
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

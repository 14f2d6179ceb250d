//! Runtime defined entities (the CAPVCD cluster RDE): read with its ETag,
//! and read-modify-write with `If-Match`, starting over when another
//! writer got in between (412).

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::errors::VcdError;

/// How often an update starts over after losing a race.
const MAX_CONFLICTS: u32 = 10;

/// A runtime defined entity (`/cloudapi/1.0.0/entities/{id}`). Read,
/// changed and PUT back whole, so fields this client does not model are
/// kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinedEntity {
    /// The entity's URN, `urn:vcloud:entity:<vendor>:<nss>:<uuid>`.
    pub id: String,
    /// The entity's name (not unique).
    pub name: String,
    /// The URN of the entity's type, e.g.
    /// `urn:vcloud:type:vmware:capvcdCluster:1.3.0`.
    pub entity_type: Option<String>,
    /// The entity's own document, e.g. the CAPVCD cluster spec and status.
    pub entity: Value,
    /// Every other field, kept so a PUT sends back what VCD (or another tool) set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Runtime defined entities (the cluster's RDE). Made by [`VcdClient::entities`].
#[derive(Clone, Copy)]
pub struct Entities<'c> {
    pub(super) client: &'c VcdClient,
}

impl Entities<'_> {
    /// The entity and its ETag.
    #[tracing::instrument(name = "get_entity", skip(self))]
    pub async fn get(&self, entity_id: &str) -> Result<(DefinedEntity, String), VcdError> {
        let request = ApiRequest::get(
            "get_entity",
            format!("/cloudapi/1.0.0/entities/{entity_id}"),
        );
        let reply = self.client.execute(&request).await?;
        let etag =
            reply
                .header("etag")
                .map(str::to_string)
                .ok_or_else(|| VcdError::Unexpected {
                    call: self.client.call_of("get_entity", &request.path),
                    detail: "the entity has no ETag".to_string(),
                })?;
        Ok((self.client.decode(&request, &reply)?, etag))
    }

    /// Applies `change` to the entity's document and writes it back, again
    /// from a fresh read when the entity changed in between.
    #[tracing::instrument(name = "update_entity", skip(self, change))]
    pub async fn update(
        &self,
        entity_id: &str,
        mut change: impl FnMut(&mut Value) -> Result<(), VcdError>,
    ) -> Result<DefinedEntity, VcdError> {
        let path = format!("/cloudapi/1.0.0/entities/{entity_id}");
        let mut conflicts = 0;
        loop {
            let (mut entity, etag) = self.get(entity_id).await?;
            change(&mut entity.entity)?;
            let body = serde_json::to_value(&entity).map_err(|error| VcdError::Unexpected {
                call: self.client.call_of("update_entity", &path),
                detail: format!("cannot encode the entity: {error}"),
            })?;
            let request = ApiRequest::new("update_entity", Method::PUT, &path)
                .json(body)
                .if_match(etag);
            match self.client.execute(&request).await {
                Ok(reply) => return self.client.decode(&request, &reply),
                Err(VcdError::Conflict { .. }) if conflicts < MAX_CONFLICTS => {
                    conflicts += 1;
                    self.client.metrics().retry("update_entity", "conflict");
                    tracing::debug!(
                        entity_id,
                        conflicts,
                        "the entity changed since it was read; reading it again"
                    );
                }
                Err(error) => return Err(error),
            }
        }
    }
}

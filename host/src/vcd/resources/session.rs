//! The session the client acts in (`sessions/current`) and the rights of
//! its roles (`roles/{id}/rights`): what a preflight compares with the
//! rights the CCM needs ([`rights`](crate::vcd::rights)).

use serde::Deserialize;

use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::errors::VcdError;
use crate::vcd::paging::MAX_PAGE_SIZE;
use crate::vcd::paging::list_all;
use crate::vcd::reference::EntityRef;

/// The current session (`/cloudapi/1.0.0/sessions/current`), the fields
/// the CCM reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// The logged-in user.
    pub user: EntityRef,
    /// The org the user logged in to.
    pub org: EntityRef,
    /// The user's roles in this session.
    #[serde(default)]
    pub role_refs: Vec<EntityRef>,
}

/// The API session and its role's rights. Made by [`VcdClient::sessions`].
#[derive(Clone, Copy)]
pub struct Sessions<'c> {
    pub(super) client: &'c VcdClient,
}

impl Sessions<'_> {
    /// The session the client's token belongs to.
    #[tracing::instrument(name = "current_session", skip(self))]
    pub async fn current(&self) -> Result<Session, VcdError> {
        self.client
            .fetch(ApiRequest::get(
                "get_current_session",
                "/cloudapi/1.0.0/sessions/current",
            ))
            .await
    }

    /// The names of the rights the role holds, all pages.
    #[tracing::instrument(skip(self))]
    pub async fn role_rights(&self, role_id: &str) -> Result<Vec<String>, VcdError> {
        let rights: Vec<EntityRef> = list_all(
            self.client,
            "role_rights",
            &format!("/cloudapi/1.0.0/roles/{role_id}/rights"),
            None,
            MAX_PAGE_SIZE,
        )
        .await?;
        Ok(rights.into_iter().filter_map(|r| r.name).collect())
    }
}

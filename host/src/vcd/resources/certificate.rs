//! The org's certificate library, by alias. Only metadata is read: the
//! certificate body is not needed to reference it, and private keys are
//! never fetched.

use serde::Deserialize;

use crate::vcd::client::VcdClient;
use crate::vcd::errors::VcdError;
use crate::vcd::fiql::Filter;
use crate::vcd::paging::MAX_PAGE_SIZE;

use super::EntityRef;

/// An item of the org's certificate library, without its PEM or key.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateItem {
    /// The item's id, as a virtual service's `certificateRef` names it.
    pub id: String,
    /// The name the item is known by, unique in the org.
    pub alias: String,
    /// Free text, if set.
    pub description: Option<String>,
}

impl CertificateItem {
    /// The reference a virtual service's `certificateRef` takes.
    pub fn reference(&self) -> EntityRef {
        EntityRef::new(self.alias.clone(), self.id.clone())
    }
}

const LIBRARY: &str = "/cloudapi/1.0.0/ssl/certificateLibrary";

impl VcdClient {
    /// Every item of the org's certificate library, all pages.
    #[tracing::instrument(skip(self))]
    pub async fn list_certificates(&self) -> Result<Vec<CertificateItem>, VcdError> {
        self.list_all("list_certificates", LIBRARY, None, MAX_PAGE_SIZE)
            .await
    }

    /// The certificate with exactly this alias, if any.
    #[tracing::instrument(skip(self))]
    pub async fn find_certificate(&self, alias: &str) -> Result<Option<CertificateItem>, VcdError> {
        let filter = Filter::eq("alias", alias);
        let items = self
            .list_all("find_certificate", LIBRARY, Some(&filter), MAX_PAGE_SIZE)
            .await?;
        super::only_one(
            items,
            |c: &CertificateItem| &c.alias,
            "certificate",
            alias,
            "in the org's library",
        )
    }
}

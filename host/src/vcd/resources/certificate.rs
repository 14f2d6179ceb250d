//! The org's certificate library, by alias. Only metadata is read: the
//! certificate body is not needed to reference it, and private keys are
//! never fetched. Uploads carry a private key, which goes into the request
//! body only: [`NewCertificate`]'s `Debug` redacts it, and neither the
//! request nor its body is ever logged.

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::create::create_checked;
use crate::vcd::delete::DeleteRight;
use crate::vcd::delete::delete_object;
use crate::vcd::errors::VcdError;
use crate::vcd::fiql::Filter;
use crate::vcd::paging::MAX_PAGE_SIZE;
use crate::vcd::paging::list_all;
use crate::vcd::secret::Secret;

use crate::vcd::reference::EntityRef;

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

/// A certificate chain and its private key to add to the library.
#[derive(Debug, Clone)]
pub struct NewCertificate {
    /// The alias, unique in the org (at most 128 characters).
    pub alias: String,
    /// Free text: the uploader's ownership tag.
    pub description: String,
    /// The PEM certificate chain, leaf first.
    pub certificate: String,
    /// The PEM private key; printed as `<redacted>`.
    pub private_key: Secret,
}

const LIBRARY: &str = "/cloudapi/1.0.0/ssl/certificateLibrary";

/// The org's certificate library. Made by [`VcdClient::certificates`].
#[derive(Clone, Copy)]
pub struct Certificates<'c> {
    pub(super) client: &'c VcdClient,
}

impl Certificates<'_> {
    /// Every item of the org's certificate library, all pages.
    #[tracing::instrument(name = "list_certificates", skip(self))]
    pub async fn list(&self) -> Result<Vec<CertificateItem>, VcdError> {
        list_all(
            self.client,
            "list_certificates",
            LIBRARY,
            None,
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The certificate with exactly this alias, if any.
    #[tracing::instrument(name = "find_certificate", skip(self))]
    pub async fn find(&self, alias: &str) -> Result<Option<CertificateItem>, VcdError> {
        let filter = Filter::eq("alias", alias);
        let items = list_all(
            self.client,
            "find_certificate",
            LIBRARY,
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await?;
        super::only_one(
            items,
            |c: &CertificateItem| &c.alias,
            "certificate",
            alias,
            "in the org's library",
        )
    }

    /// Adds the certificate and its key to the library (VCD answers at once,
    /// with the item). A create whose answer was lost is found by alias.
    #[tracing::instrument(name = "upload_certificate", skip(self, new), fields(alias = %new.alias))]
    pub async fn upload(&self, new: &NewCertificate) -> Result<CertificateItem, VcdError> {
        let body = json!({
            "alias": new.alias,
            "description": new.description,
            "certificate": new.certificate,
            "privateKey": new.private_key.expose(),
        });
        let body = &body;
        create_checked(
            self.client,
            "upload_certificate",
            || async move {
                let request =
                    ApiRequest::new("upload_certificate", Method::POST, LIBRARY).json(body.clone());
                self.client.fetch(request).await
            },
            || self.find(&new.alias),
        )
        .await
    }

    /// Deletes a library item. VCD refuses (HTTP 400) while a virtual
    /// service uses it; gone already counts as done.
    #[tracing::instrument(name = "delete_certificate", skip(self))]
    pub async fn delete(&self, id: &str) -> Result<(), VcdError> {
        let path = format!("{LIBRARY}/{id}");
        let request = ApiRequest::new("delete_certificate", Method::DELETE, &path);
        delete_object(
            self.client,
            None,
            request,
            DeleteRight::Certificates,
            || {
                self.client
                    .fetch::<CertificateItem>(ApiRequest::get("get_certificate", &path))
            },
        )
        .await
    }
}

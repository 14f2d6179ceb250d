//! Applying the writes that follow a Service's objects: IP Space claims
//! marked or released, and certificate uploads nothing uses any more.

use crate::lb::apply::applier::Applier;
use crate::lb::errors::LbError;
use crate::lb::plan::op::AddressOp;
use crate::vcd::VcdError;

impl Applier<'_> {
    /// Marks or releases one allocation.
    pub(super) async fn apply_address(&self, op: AddressOp) -> Result<(), LbError> {
        match op {
            AddressOp::Mark {
                space_id,
                allocation,
                marker,
                holder,
            } => {
                tracing::info!(ip = %allocation.value, %holder, "an IP Space claim is marked for its Service");
                self.client
                    .claim_allocation(&space_id, &allocation, &marker)
                    .await
                    .map(|_| ())
                    .map_err(self.failed(format!(
                        "claiming IP Space allocation {} for {holder}",
                        allocation.value
                    )))
            }
            AddressOp::Release {
                space_id,
                allocation,
            } => self
                .client
                .release_allocation(&space_id, &allocation)
                .await
                .map_err(self.failed(format!(
                    "releasing IP Space allocation {}",
                    allocation.value
                ))),
        }
    }

    /// Deletes one upload unless a reconcile in progress holds it; whether
    /// it is gone. A failure is logged: the next pass over the Secret, or
    /// the next start-up sweep, tries again.
    pub(super) async fn delete_upload(&self, id: &str, alias: &str) -> bool {
        let service = self.service;
        if self.upload_pins.is_pinned(id) {
            return false;
        }
        match self.client.delete_certificate(id).await {
            Ok(()) => {
                tracing::info!(%service, %alias, "deleted a certificate upload nothing uses any more");
                self.catalog.forget_certificate(id);
                true
            }
            Err(VcdError::Rejected { status: 400, .. }) => {
                tracing::debug!(%service, %alias, "VCD keeps the certificate upload: a virtual service still uses it; deleted later");
                false
            }
            Err(error) => {
                tracing::warn!(%service, %alias, %error, "could not delete a certificate upload; tried again later");
                false
            }
        }
    }
}

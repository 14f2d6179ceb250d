//! Applying IP Space writes (the Service's address allocated or claimed
//! first; claims a move or a delete leaves marked or released after the
//! objects), and the certificate library's uploads of TLS Secrets: made
//! before the rest of a pass, deleted once nothing uses them.

use std::net::IpAddr;

use crate::lb::apply::applier::Applier;
use crate::lb::decide::allocations::unmarked;
use crate::lb::decide::certificates::is_upload_of;
use crate::lb::errors::LbError;
use crate::lb::journal::Noted;
use crate::lb::plan::op::AddressOp;
use crate::lb::tls::Upload;
use crate::lb::tls::tag::SecretTag;
use crate::vcd::VcdError;
use crate::vcd::resources::ipspace::IpAllocation;

impl Applier<'_> {
    /// Marks or releases one allocation.
    pub(super) async fn apply_address(&self, op: AddressOp) -> Result<(), LbError> {
        match op {
            AddressOp::Mark {
                space_id,
                allocation,
                marker,
                holder,
            } => self.tag(&space_id, &allocation, &marker, &holder).await,
            AddressOp::Allocate {
                space_id,
                space_name,
                ip,
                marker,
                holder,
            } => {
                self.note(&space_id, ip).await?;
                let allocation = self.allocate(&space_id, &space_name, Some(ip)).await?;
                self.tag(&space_id, &allocation, &marker, &holder).await
            }
            AddressOp::AllocateAny {
                space_id,
                space_name,
                marker,
                holder,
            } => {
                let allocation = self.allocate(&space_id, &space_name, None).await?;
                // The address is known only now: a crash before this note
                // strands the allocation (API 37.2 closes that window).
                if let Ok(ip) = allocation.value.parse()
                    && let Err(error) = self.note(&space_id, ip).await
                {
                    tracing::warn!(service = %self.service, %error, "could not note the IP Space allocation; claiming it at once");
                }
                self.tag(&space_id, &allocation, &marker, &holder).await
            }
            AddressOp::Release {
                space_id,
                allocation,
            } => self
                .client
                .ip_spaces()
                .release_allocation(&space_id, &allocation)
                .await
                .map_err(self.failed(format!(
                    "releasing IP Space allocation {}",
                    allocation.value
                ))),
        }
    }

    /// Writes `marker` on the allocation: the claim of `holder`.
    async fn tag(
        &self,
        space_id: &str,
        allocation: &IpAllocation,
        marker: &str,
        holder: &str,
    ) -> Result<(), LbError> {
        tracing::info!(ip = %allocation.value, %holder, "an IP Space allocation is claimed for its Service");
        self.client
            .ip_spaces()
            .claim_allocation(space_id, allocation, marker)
            .await
            .map(|_| ())
            .map_err(self.failed(format!(
                "claiming IP Space allocation {} for {holder}",
                allocation.value
            )))
    }

    /// Keeps the allocation about to be made in the Service's journal.
    async fn note(&self, space_id: &str, ip: IpAddr) -> Result<(), LbError> {
        let Some((journal, spec)) = self.journal else {
            return Ok(());
        };
        let noted = Noted {
            space_id: space_id.to_string(),
            ip,
        };
        journal
            .note(spec, noted.format())
            .await
            .map_err(|source| LbError::Journal {
                service: self.service.to_string(),
                source,
            })
    }

    /// Allocates `ip` (or any address) and finds the new allocation, which
    /// carries no claim yet. An answer lost after VCD allocated leaves an
    /// unmarked allocation of the address: the one just asked for. A
    /// refusal (the address taken meanwhile, the quota spent) is
    /// [`LbError::AllocationRefused`].
    async fn allocate(
        &self,
        space_id: &str,
        space_name: &str,
        ip: Option<IpAddr>,
    ) -> Result<IpAllocation, LbError> {
        let text = ip.map(|ip| ip.to_string());
        let what = text.clone().unwrap_or_else(|| "an address".to_string());
        let action = format!("allocating {what} from IP Space {space_name}");
        let allocated = self
            .client
            .ip_spaces()
            .allocate_floating_ip(space_id, text.as_deref())
            .await;
        let (value, lost) = match (allocated, text) {
            (Ok(answer), _) => (answer.value, None),
            (Err(VcdError::TaskFailed { message, .. }), _) => {
                return Err(LbError::AllocationRefused {
                    service: self.service.to_string(),
                    ip,
                    space: space_name.to_string(),
                    message,
                });
            }
            // The answer lost: VCD may have allocated the address asked for.
            (Err(error), Some(text)) => (text, Some(error)),
            (Err(error), None) => return Err(self.failed(action)(error)),
        };
        let found = self
            .client
            .ip_spaces()
            .find_allocation(space_id, &value)
            .await
            .map_err(self.failed("looking up the new IP Space allocation".into()))?
            .filter(unmarked);
        found.ok_or_else(|| {
            let error = lost.unwrap_or(VcdError::Missing {
                what: "IP allocation",
                name: value,
                scope: format!("in IP Space {space_name} right after allocating it"),
            });
            self.failed(action)(error)
        })
    }

    /// Adds a Secret's certificate to the library; `false` when another
    /// reconcile of a Service naming the same Secret made the upload
    /// meanwhile. An item with the alias that is not that upload is an
    /// error, and the next pass names it.
    pub(super) async fn upload_certificate(&self, upload: Upload) -> Result<bool, LbError> {
        let Upload { secret, item } = upload;
        let alias = item.alias.clone();
        let action = format!("uploading Secret {secret} to the certificate library as {alias}");
        let certificates = self.client.certificates();
        let (uploaded, made) = match certificates.upload(&item).await {
            Ok(uploaded) => (uploaded, true),
            Err(VcdError::DuplicateName { .. }) => {
                let tag = SecretTag::parse(&item.description);
                let found = certificates
                    .find(&alias)
                    .await
                    .map_err(self.failed(action.clone()))?
                    .filter(|found| tag.as_ref().is_some_and(|tag| is_upload_of(found, tag)));
                let found = found.ok_or_else(|| {
                    self.failed(action)(VcdError::Missing {
                        what: "upload of this cluster",
                        name: alias.clone(),
                        scope: "in the certificate library: another item has its alias".into(),
                    })
                })?;
                (found, false)
            }
            Err(error) => return Err(self.failed(action)(error)),
        };
        let service = self.service;
        tracing::info!(%service, %secret, %alias, "uploaded a TLS Secret's certificate");
        self.catalog.remember_certificate(uploaded);
        Ok(made)
    }

    /// Deletes one upload unless a reconcile in progress holds it; whether
    /// it is gone. A failure is logged: the next pass over the Secret, or
    /// the next start-up sweep, tries again.
    pub(super) async fn delete_upload(&self, id: &str, alias: &str) -> bool {
        let service = self.service;
        // Pinned by id once a pass found it, by alias while it is made.
        if self.upload_pins.is_pinned(id) || self.upload_pins.is_pinned(alias) {
            return false;
        }
        match self.client.certificates().delete(id).await {
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

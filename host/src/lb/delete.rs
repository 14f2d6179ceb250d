//! Deleting a Service's load balancer: its objects, the certificate
//! uploads only it used, the upstream CCM's objects a takeover had not
//! replaced yet, its IP Space claims and an allocation the journal noted
//! that was never claimed.

use crate::lb::LoadBalancers;
use crate::lb::apply::rde::RdeRecord;
use crate::lb::decide::allocations;
use crate::lb::errors::LbError;
use crate::lb::journal::Noted;
use crate::lb::observe::objects::GatewayView;
use crate::lb::operations::firewall_ops;
use crate::lb::plan;
use crate::lb::plan::claims::hand_off;
use crate::lb::plan::op::{AddressOp, Op};
use crate::lb::service::ServiceSpec;

impl LoadBalancers {
    /// Removes every object the Service owns and releases its IP Space
    /// allocations. Needs only namespace, name and uid of the Service.
    pub async fn delete(&self, service: &ServiceSpec) -> Result<(), LbError> {
        service.check()?;
        let key = service.key();
        let result = self.delete_owned(service).await;
        match &result {
            Ok(Some(ip)) => {
                self.rde
                    .record(RdeRecord::Deleted {
                        service: key,
                        ip: Some(ip.clone()),
                    })
                    .await
            }
            Ok(None) => {}
            Err(error) => {
                self.rde
                    .record(RdeRecord::Failed {
                        service: key,
                        name: "DeleteLoadbalancerError",
                        message: error.to_string(),
                    })
                    .await
            }
        }
        result.map(|_| ())
    }

    async fn delete_owned(&self, service: &ServiceSpec) -> Result<Option<String>, LbError> {
        let (view, observed) = self.observe(service).await?;
        let upstream = self.upstream_objects(service, &view);
        let ip = self
            .external_ips(&observed)
            .first()
            .map(ToString::to_string)
            .or(upstream.ip.clone());
        let mut ops = plan::teardown(&observed);
        let mut changed = !ops.is_empty() || !upstream.deletes.is_empty();
        // The rule goes first: it must not outlive the address it lets in.
        if self.config.manage_firewall {
            let removal = self
                .plan_firewall_removal(&self.owner(service), &self.names(service))
                .await?;
            changed |= !removal.is_empty();
            self.applier(&service.key())
                .apply(firewall_ops(removal), &observed)
                .await?;
        }
        // Its IP set, once no pool uses it.
        let removal = self
            .own_set_removal(&self.owner(service), &self.names(service))
            .await?;
        changed |= removal.is_some();
        ops.extend(removal);
        self.applier(&service.name).apply(ops, &observed).await?;
        // An upload a failed reconcile left unused goes with its Service too.
        let leftovers = crate::lb::tls::Leftovers {
            referenced: observed.certificate_ids(),
            secrets: crate::lb::tls::secret_keys(service),
        };
        let prunes = self.plan_prunes(&service.key(), &leftovers).await;
        self.applier(&service.key())
            .apply(prunes, &observed)
            .await?;
        // A takeover still waiting leaves the upstream CCM's objects: they
        // go with the Service, as upstream would have deleted them.
        // Its claim is made ours first, so a crash after the deletes cannot
        // leave an upstream-marked allocation that nothing finds again.
        if !upstream.deletes.is_empty() {
            self.adopt_upstream_claims(service).await?;
            self.remove_upstream(service, upstream).await?;
        }
        let releases = self.claim_releases(service, &view).await?;
        changed |= !releases.is_empty();
        self.applier(&service.key())
            .apply(releases, &observed)
            .await?;
        Ok(changed.then(|| ip.unwrap_or_default()))
    }

    /// IP Spaces: the releases of the Service's claims (or their passing on
    /// to a sharer), and of an allocation the journal noted unclaimed.
    pub(super) async fn claim_releases(
        &self,
        service: &ServiceSpec,
        view: &GatewayView,
    ) -> Result<Vec<Op>, LbError> {
        if !self.source.is_spaces() {
            return Ok(Vec::new());
        }
        let owner = self.owner(service);
        let claims = allocations::find_claims(&self.client, self.source.spaces(), &owner)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "finding the Service's IP Space allocations".into(),
            ))?;
        let mut releases: Vec<Op> = claims
            .into_iter()
            .map(|(space_id, allocation)| {
                Op::Address(hand_off(view, space_id, allocation, &owner, None))
            })
            .collect();
        releases.extend(self.noted_release(service).await?);
        Ok(releases)
    }

    /// The release of an allocation the journal noted that a crash or a
    /// lost answer left unclaimed, if there is one.
    async fn noted_release(&self, service: &ServiceSpec) -> Result<Option<Op>, LbError> {
        let Some(noted) = self
            .journal
            .noted(service)
            .as_deref()
            .and_then(Noted::parse)
        else {
            return Ok(None);
        };
        if !self.source.spaces().iter().any(|s| s.id == noted.space_id) {
            return Ok(None);
        }
        let found = self
            .client
            .find_allocation_by_value(&noted.space_id, &noted.ip.to_string())
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "looking up the noted IP Space allocation".into(),
            ))?;
        Ok(found.filter(allocations::unmarked).map(|allocation| {
            Op::Address(AddressOp::Release {
                space_id: noted.space_id,
                allocation,
            })
        }))
    }
}

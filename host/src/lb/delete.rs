//! Deleting a Service's load balancer: its objects, the certificate
//! uploads only it used, the upstream CCM's objects a takeover had not
//! replaced yet, its IP Space claims and an allocation the journal noted
//! that was never claimed.

use crate::lb::LoadBalancers;
use crate::lb::apply::rde::RdeRecord;
use crate::lb::decide::allocations;
use crate::lb::errors::LbError;
use crate::lb::journal::Noted;
use crate::lb::operations::firewall_ops;
use crate::lb::plan;
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
        self.prune_uploads(&service.key(), &leftovers).await;
        // A takeover still waiting leaves the upstream CCM's objects: they
        // go with the Service, as upstream would have deleted them.
        // Its claim is made ours first, so a crash after the deletes cannot
        // leave an upstream-marked allocation that nothing finds again.
        if !upstream.deletes.is_empty() {
            self.adopt_upstream_claims(service).await?;
            self.remove_upstream(service, upstream).await?;
        }
        if self.source.is_spaces() {
            let owner = self.owner(service);
            let vcd = |a: &str| LbError::vcd(&service.key(), a.to_string());
            let claims = allocations::find_claims(&self.client, self.source.spaces(), &owner)
                .await
                .map_err(vcd("finding the Service's IP Space allocations"))?;
            for (space_id, allocation) in claims {
                changed = true;
                self.release_or_pass_on(&view, &space_id, &allocation, &owner, None)
                    .await
                    .map_err(vcd(&format!(
                        "releasing IP Space allocation {}",
                        allocation.value
                    )))?;
            }
            changed |= self.release_noted(service).await?;
        }
        Ok(changed.then(|| ip.unwrap_or_default()))
    }

    /// Releases an allocation the journal noted that a crash or a lost
    /// answer left unclaimed; whether there was one.
    async fn release_noted(&self, service: &ServiceSpec) -> Result<bool, LbError> {
        let Some(noted) = self
            .journal
            .noted(service)
            .as_deref()
            .and_then(Noted::parse)
        else {
            return Ok(false);
        };
        if !self.source.spaces().iter().any(|s| s.id == noted.space_id) {
            return Ok(false);
        }
        let vcd = |a: String| LbError::vcd(&service.key(), a);
        let ip = noted.ip.to_string();
        let found = self
            .client
            .find_allocation_by_value(&noted.space_id, &ip)
            .await
            .map_err(vcd("looking up the noted IP Space allocation".into()))?;
        match found.filter(allocations::unmarked) {
            Some(allocation) => {
                self.client
                    .release_allocation(&noted.space_id, &allocation)
                    .await
                    .map_err(vcd(format!("releasing IP Space allocation {ip}")))?;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

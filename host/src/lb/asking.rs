//! Asking the Service's policy: the certificate library and the Service's
//! TLS Secrets are offered as certificates, the policy decides, and the
//! Secrets its decision uses are uploaded, so the plan can point virtual
//! services at real library items. A refused Secret or decision writes
//! nothing.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use super::decide::run_policy;
use super::input::{InputParts, build};
use super::observe::GatewayView;
use super::tls::{self, Pinned};
use super::{LbError, LoadBalancers, ServiceSpec};
use crate::policy::errors::EvalError;
use crate::policy::model::{Decision, DecisionError};
use crate::vcd::resources::certificate::CertificateItem;

/// A checked decision and what it needs to be planned.
pub struct Decided {
    pub decision: Decision,
    /// The certificates offered, the Secrets' entries with their uploads' ids.
    pub certificates: Vec<CertificateItem>,
    /// The uploads the decision uses, kept from deletion until the pass ends.
    pub pins: Vec<Pinned>,
    /// `namespace/name` of the Secrets the Service names.
    pub secrets: Vec<String>,
}

fn policy_needs_certificates(error: &LbError) -> bool {
    match error {
        LbError::Policy {
            source:
                EvalError::Declined {
                    error: DecisionError::CertificateNotFound(_),
                    ..
                },
            ..
        } => true,
        LbError::Policy {
            source: EvalError::InvalidDecision { problem, .. },
            ..
        } => problem.contains("certificate"),
        _ => false,
    }
}

impl LoadBalancers {
    pub(super) async fn decide(
        &self,
        service: &ServiceSpec,
        view: &GatewayView,
        current: Option<Ipv4Addr>,
    ) -> Result<Decided, LbError> {
        let in_use: HashSet<Ipv4Addr> = view.addresses_in_use().into_iter().collect();
        let secrets = self.read_tls_secrets(service).await?;
        let mut fresh = false;
        loop {
            let library = self
                .catalog
                .certificates(&self.client, fresh)
                .await
                .map_err(LbError::vcd(
                    &service.key(),
                    "reading the certificate library".into(),
                ))?;
            let mut certificates = tls::offered(&library, &secrets);
            let input = build(InputParts {
                service,
                cluster: &self.cluster,
                pools: self.source.address_pools(&in_use),
                certificates: &certificates,
                profiles: &self.features.profiles,
                current,
            });
            match run_policy(&self.registry, input).await {
                Ok(decision) => {
                    let pins = self
                        .upload_used(service, &decision, &secrets, &library, &mut certificates)
                        .await?;
                    return Ok(Decided {
                        decision,
                        certificates,
                        pins,
                        secrets: secrets
                            .iter()
                            .map(|s| format!("{}/{}", s.namespace, s.name))
                            .collect(),
                    });
                }
                // The library may have gained the certificate since it was read.
                Err(error) if !fresh && policy_needs_certificates(&error) => fresh = true,
                Err(error) => return Err(error),
            }
        }
    }
}

//! Builds the policy's `DecisionInput` from the Service, the cluster, the
//! address pools, the certificate library, the gateway's profiles and
//! service engine groups, and the Service's current address.

use std::net::IpAddr;

use crate::lb::service::ServiceSpec;
use crate::policy::model::{
    AddressChoice, AddressPool, AppProfile, Certificate, Cluster, Decision, DecisionInput,
    IpAddress, ServiceEngineGroup,
};
use crate::vcd::resources::certificate::CertificateItem;

pub struct InputParts<'a> {
    pub service: &'a ServiceSpec,
    pub cluster: &'a Cluster,
    pub pools: Vec<AddressPool>,
    pub certificates: &'a [CertificateItem],
    pub profiles: &'a [AppProfile],
    /// The gateway's service engine groups.
    pub engine_groups: Vec<ServiceEngineGroup>,
    /// The current address of the Service's first family.
    pub current: Option<IpAddr>,
    /// Addresses kept for the Service's namespace and name.
    pub retained: Vec<IpAddr>,
}

/// The current decision carries the address only: that is what a policy
/// needs to keep it stable; the ports (and whether client addresses are
/// preserved) are decided afresh every time.
pub fn build(parts: InputParts<'_>) -> DecisionInput {
    let (service, namespace) = parts.service.to_policy();
    DecisionInput {
        service,
        namespace,
        cluster: parts.cluster.clone(),
        pools: parts.pools,
        certificates: parts
            .certificates
            .iter()
            .map(|c| Certificate {
                alias: c.alias.clone(),
            })
            .collect(),
        profiles: parts.profiles.to_vec(),
        current: parts.current.map(|ip| {
            Decision::of(
                AddressChoice::Specific(IpAddress::from(ip)),
                Vec::new(),
                Vec::new(),
            )
        }),
        ready_endpoints: parts.service.ready_endpoints,
        service_engine_groups: parts.engine_groups,
        retained: parts.retained.into_iter().map(IpAddress::from).collect(),
    }
}

//! Typed load-balancer errors. Each message names what to fix (the config
//! key, the annotation, the certificate alias, the pool, the policy); the
//! controller turns them into Events on the Service.

use crate::policy::errors::EvalError;
use crate::policy::registry::SelectError;
use crate::vcd::VcdError;

#[derive(Debug, thiserror::Error)]
pub enum LbError {
    #[error("load-balancer config: {0}")]
    Config(#[from] super::config::InvalidLbConfig),
    #[error("Service {service}: {problem}")]
    InvalidService { service: String, problem: String },
    #[error("{0}")]
    PolicySelection(#[from] SelectError),
    /// The policy trapped, timed out, declined or broke the contract; its
    /// own words are in the message. Nothing changed in VCD.
    #[error("{0}; nothing was changed in VCD")]
    Policy(#[from] EvalError),
    #[error(
        "Service {service}: address {ip} is already used on the edge gateway by {holder}; request another address (spec.loadBalancerIP or vcd-ccm.io/load-balancer-ip) or free it"
    )]
    AddressInUse {
        service: String,
        ip: String,
        holder: String,
    },
    #[error(
        "Service {service}: address pool {pool} has no free address{detail}; free an address, widen loadbalancer.vipSubnet / the gateway's IP ranges, or raise the IP Space quota"
    )]
    PoolExhausted {
        service: String,
        pool: String,
        /// VCD's own words, when it refused an allocation (`: …`).
        detail: String,
    },
    #[error(
        "Service {service}: the policy chose pool {pool}, which this load balancer does not offer"
    )]
    UnknownPool { service: String, pool: String },
    #[error(
        "Service {service}: no free internal (one-arm) address between {start} and {end}; widen loadbalancer.oneArm.startIP/endIP"
    )]
    OneArmExhausted {
        service: String,
        start: String,
        end: String,
    },
    #[error(
        "Service {service}: address {ip} was taken by another owner at the same time ({holder}) {attempts} times in a row; the next reconcile tries again"
    )]
    ClaimLost {
        service: String,
        ip: String,
        holder: String,
        attempts: u32,
    },
    #[error(
        "Service {service}: {what} '{name}' exists on the gateway but is not ours ({owner}); rename or delete it"
    )]
    ForeignObject {
        service: String,
        what: &'static str,
        name: String,
        owner: String,
    },
    #[error("Service {service}: {action}: {source}")]
    Vcd {
        service: String,
        action: String,
        #[source]
        source: VcdError,
    },
}

impl LbError {
    /// VCD refused a create because an object of that name exists.
    pub fn is_duplicate_name(&self) -> bool {
        matches!(
            self,
            LbError::Vcd {
                source: VcdError::DuplicateName { .. },
                ..
            }
        )
    }

    /// Wraps a VCD error with the Service and the step that failed.
    pub fn vcd(service: &str, action: String) -> impl FnOnce(VcdError) -> LbError + use<> {
        let service = service.to_string();
        move |source| LbError::Vcd {
            service,
            action,
            source,
        }
    }
}

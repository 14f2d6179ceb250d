//! Typed load-balancer errors. Each message names what to fix (the config
//! key, the annotation, the certificate alias, the pool, the policy); the
//! controller turns them into Events on the Service.

use crate::policy::errors::EvalError;
use crate::policy::registry::SelectError;
use crate::vcd::VcdError;

/// What an allocation journal failed with.
pub type JournalError = Box<dyn std::error::Error + Send + Sync>;

/// Why a Service's load balancer could not be ensured, updated or deleted.
#[derive(Debug, thiserror::Error)]
pub enum LbError {
    /// The load balancer's settings are unusable.
    #[error("load-balancer config: {0}")]
    Config(#[from] crate::lb::config::InvalidLbConfig),
    /// Something in the Service itself cannot be served.
    #[error("Service {service}: {problem}")]
    InvalidService {
        /// `namespace/name`.
        service: String,
        /// What to change.
        problem: String,
    },
    /// A TLS Secret the Service names cannot be used. Nothing changed in VCD.
    #[error("Service {service}: {source}; nothing was changed in VCD")]
    TlsSecret {
        /// `namespace/name`.
        service: String,
        /// Which Secret, and what is wrong with it.
        #[source]
        source: crate::lb::tls::TlsSecretError,
    },
    /// No policy could be chosen for the Service.
    #[error("{0}")]
    PolicySelection(#[from] SelectError),
    /// The policy trapped, timed out, declined or broke the contract; its
    /// own words are in the message. Nothing changed in VCD.
    #[error("{source}{hint}; nothing was changed in VCD")]
    Policy {
        /// What the policy (or the sandbox) said.
        #[source]
        source: EvalError,
        /// What would work instead (`; …`), from the decision input, or empty.
        hint: String,
    },
    #[error(
        "Service {service}: address {ip} is already used on the edge gateway by {holder}; request another address (spec.loadBalancerIP or vcd-ccm.io/load-balancer-ip) or free it"
    )]
    /// The requested address is held by another owner.
    AddressInUse {
        /// `namespace/name`.
        service: String,
        /// The address requested.
        ip: String,
        /// Who holds it.
        holder: String,
    },
    #[error(
        "Service {service}: address pool {pool} has no free address{detail}; free an address, widen loadbalancer.vipSubnet / the gateway's IP ranges, or raise the IP Space quota"
    )]
    /// The chosen pool has no free address.
    PoolExhausted {
        /// `namespace/name`.
        service: String,
        /// The pool's name, size and ranges.
        pool: String,
        /// VCD's own words, when it refused an allocation (`: …`).
        detail: String,
    },
    #[error(
        "Service {service}: service engine group {group} has room for {free} more virtual service(s) on this gateway and the Service needs {needed}; choose another group, or ask the provider to raise the group's maxVirtualServices; nothing was changed in VCD"
    )]
    /// The group the decision names cannot take the Service's virtual services.
    EngineGroupFull {
        /// `namespace/name`.
        service: String,
        /// The group's name.
        group: String,
        /// How many more virtual services it takes.
        free: usize,
        /// How many the Service would add to it.
        needed: usize,
    },
    #[error(
        "Service {service}: the policy chose pool {pool}, which this load balancer does not offer; it offers: {offered}"
    )]
    /// The policy named a pool this load balancer does not offer.
    UnknownPool {
        /// `namespace/name`.
        service: String,
        /// The pool the policy named.
        pool: String,
        /// The pools it offers, with their ranges.
        offered: String,
    },
    #[error(
        "Service {service}: no free internal (one-arm) address between {start} and {end}; widen loadbalancer.oneArm.startIP/endIP"
    )]
    /// The one-arm range has no free internal address.
    OneArmExhausted {
        /// `namespace/name`.
        service: String,
        /// `loadbalancer.oneArm.startIP`.
        start: String,
        /// `loadbalancer.oneArm.endIP`.
        end: String,
    },
    #[error(
        "Service {service}: address {ip} was taken by another owner at the same time ({holder}) {attempts} times in a row; the next reconcile tries again"
    )]
    /// Another owner kept winning the race for each new address.
    ClaimLost {
        /// `namespace/name`.
        service: String,
        /// The last address lost.
        ip: String,
        /// Who took it.
        holder: String,
        /// Addresses lost in a row.
        attempts: u32,
    },
    #[error(
        "Service {service}: {what} '{name}' exists on the gateway but is not ours ({owner}); rename or delete it"
    )]
    /// An object with our name exists but belongs to someone else.
    ForeignObject {
        /// `namespace/name`.
        service: String,
        /// The kind of object (`pool`, `virtual service`, …).
        what: &'static str,
        /// Its name on the gateway.
        name: String,
        /// Its owner as its description says.
        owner: String,
    },
    /// Objects of the Service carry an ownership tag of a newer format: a
    /// later vcd-ccm wrote them. Nothing was changed in VCD.
    #[error(
        "Service {service}: {objects} carry an ownership tag of format {format}, newer than this vcd-ccm knows ({known}): a later version wrote them, so this one neither changes nor deletes them (nothing was changed in VCD); run that version or a later one"
    )]
    NewerFormat {
        /// `namespace/name`.
        service: String,
        /// The objects, as `virtual service <name>, pool <name>, …`.
        objects: String,
        /// The format of the first of them.
        format: u32,
        /// The newest format this version knows.
        known: u32,
    },
    /// A takeover from the upstream CCM was refused before anything upstream
    /// was touched; its load balancer keeps serving.
    #[error(
        "{source}; the upstream CCM's load balancer of this Service ({objects} objects) keeps serving until this is fixed, then it is replaced on the same address"
    )]
    TakeoverWaiting {
        /// How many upstream objects wait to be replaced.
        objects: usize,
        /// Why the replacement cannot be made yet.
        #[source]
        source: Box<LbError>,
    },
    /// The note of an IP Space allocation could not be kept on the Service,
    /// so nothing was allocated.
    #[error(
        "Service {service}: cannot note the IP Space allocation on the Service before making it (nothing was allocated): {source}"
    )]
    Journal {
        /// `namespace/name`.
        service: String,
        /// Why the note could not be stored.
        source: JournalError,
    },
    /// The IP Space refused an allocation: the address was taken
    /// meanwhile (perhaps by an org whose allocations this one cannot see),
    /// or the quota is spent. A reconcile moves on to another address.
    #[error(
        "Service {service}: IP Space {space} refused to allocate {}: {message}",
        ip.map_or_else(|| "an address".to_string(), |ip| ip.to_string())
    )]
    AllocationRefused {
        /// `namespace/name`.
        service: String,
        /// The address asked for (none before API 37.2).
        ip: Option<std::net::IpAddr>,
        /// The IP Space's name.
        space: String,
        /// VCD's task message.
        message: String,
    },
    /// A VCD call failed.
    #[error("Service {service}: {action}: {source}")]
    Vcd {
        /// `namespace/name`.
        service: String,
        /// The step that failed.
        action: String,
        /// VCD's error, boxed: it is large and errors travel up many frames.
        #[source]
        source: Box<VcdError>,
    },
}

impl LbError {
    /// VCD refused a create because an object of that name exists.
    pub fn is_duplicate_name(&self) -> bool {
        matches!(
            self,
            LbError::Vcd { source, .. } if matches!(**source, VcdError::DuplicateName { .. })
        )
    }

    /// The write a read-only client did not send (`vcd-ccm plan`), if that
    /// is what stopped the reconcile.
    pub fn refused_write(&self) -> Option<String> {
        match self {
            LbError::Vcd { action, source, .. } => match &**source {
                VcdError::ReadOnly { call } => Some(format!("{action}: {call}")),
                _ => None,
            },
            _ => None,
        }
    }

    /// Wraps a VCD error with the Service and the step that failed.
    pub fn vcd(service: &str, action: String) -> impl FnOnce(VcdError) -> LbError + use<> {
        let service = service.to_string();
        move |source| LbError::Vcd {
            service,
            action,
            source: Box::new(source),
        }
    }
}

//! Decide: select the Service's policy, run it in a fresh sandbox (it
//! yields to other tasks at every epoch tick), then check its address against VCD (free, or already
//! ours) and turn it into a concrete external address.

use std::collections::HashSet;
use std::net::IpAddr;

use crate::lb::decide::allocations;
use crate::lb::decide::hints;
use crate::lb::decide::sharing::{Group, POOL_PREFIX};
use crate::lb::errors::LbError;
use crate::lb::internal_pools::InternalPools;
use crate::lb::journal::AllocationJournal;
use crate::lb::observe::ipam::{self, IpSource};
use crate::lb::observe::objects::GatewayView;
use crate::lb::ownership::OwnerTag;
use crate::lb::service::ServiceSpec;
use crate::lb::vips::Vips;
use crate::policy::EvalError;
use crate::policy::Registry;
use crate::policy::decision::DecideError;
use crate::policy::model::{AddressChoice, AddressPool, Decision, DecisionInput, IpFamily};
use crate::vcd::resources::ipspace::IpAllocation;
use crate::vcd::{ApiVersion, VcdClient};

/// The first API version whose `allocate` takes the address to allocate.
const ALLOCATE_BY_VALUE: ApiVersion = ApiVersion::new(37, 2);

/// Runs the governing policy. The host's contract checks run inside
/// `Policy::decide`; a failure of any kind changes nothing in VCD.
pub async fn run_policy(registry: &Registry, input: DecisionInput) -> Result<Decision, LbError> {
    registry.decide(&input).await.map_err(|error| match error {
        DecideError::Select(error) => LbError::from(error),
        DecideError::Eval(source) => {
            let hint = match &source {
                EvalError::Declined { error, .. } => hints::for_declined(error, &input),
                _ => String::new(),
            };
            LbError::Policy { source, hint }
        }
    })
}

/// The external address a decision resolves to.
#[derive(Debug, Clone)]
pub struct Address {
    pub ip: IpAddr,
    /// A new IP-block address: nothing in VCD reserves it, so the claim is
    /// verified once our objects hold it.
    pub verify_claim: bool,
    /// The IP Space write that makes the address the Service's.
    pub claim: Option<SpaceClaim>,
}

/// An IP Space write an address needs before it is the Service's, made by
/// the applier (as the plan's first op).
#[derive(Debug, Clone)]
pub enum SpaceClaim {
    /// A new allocation of the address.
    Allocate {
        space_id: String,
        space_name: String,
        ip: IpAddr,
    },
    /// Before API 37.2: an allocation of whatever address the space picks.
    AllocateAny {
        space_id: String,
        space_name: String,
    },
    /// An allocation already made, tagged as the Service's.
    Tag {
        space_id: String,
        allocation: IpAllocation,
    },
}

impl Address {
    /// An address that needs no IP Space write.
    pub fn at(ip: IpAddr, verify_claim: bool) -> Self {
        Self {
            ip,
            verify_claim,
            claim: None,
        }
    }
}

/// What resolving a decision's address comes to.
#[derive(Debug, Clone)]
pub enum Resolved {
    Ready(Address),
    /// Below API 37.2 an IP Space picks the address it allocates: that
    /// allocation is made first, and the Service decided again with it.
    AllocateFirst(SpaceClaim),
}

impl From<Address> for Resolved {
    fn from(address: Address) -> Self {
        Resolved::Ready(address)
    }
}

/// What the resolution needs to know about the Service and the gateway.
pub struct AddressContext<'a> {
    pub client: &'a VcdClient,
    /// The edge gateway: a requested address's holders are read from it.
    pub gateway_id: &'a str,
    /// Whether DNAT rules hold the external addresses (one-arm modes).
    pub nat: bool,
    pub source: &'a IpSource,
    pub internal: &'a InternalPools,
    /// A requested address whose allocation no one claimed or used may be
    /// taken (`loadbalancer.claimUnusedAllocations`).
    pub take_unused: bool,
    /// The VIPs of the Service's own virtual services in an internal pool.
    pub own_internal: &'a [IpAddr],
    /// Where IP Space allocations are noted before they are made.
    pub journal: &'a dyn AllocationJournal,
    pub spec: &'a ServiceSpec,
    /// `namespace/name`, for messages.
    pub service: &'a str,
    /// The Service's owner: IP Space claims carry its tag.
    pub owner: &'a OwnerTag,
    /// Seeds the spread of picks (the Service's names hash).
    pub seed: &'a str,
    /// The Service's current addresses, one per family.
    pub current: Vips,
    /// External addresses the Service's own objects use (more than one of
    /// a family when a move was cut short).
    pub held: &'a HashSet<IpAddr>,
    /// Addresses lost to another owner in this reconcile.
    pub excluded: &'a HashSet<IpAddr>,
    /// The gateway's used addresses, from the gateway snapshot.
    pub used: &'a [(IpAddr, String)],
    /// The addresses of the Service's sharing key, offered as pools.
    pub groups: &'a [Group],
}

impl AddressContext<'_> {
    pub async fn resolve(&self, choice: &AddressChoice) -> Result<Resolved, LbError> {
        let keep = |ip| Address::at(ip, false);
        let address = match choice {
            AddressChoice::KeepCurrent => {
                match self.current.ordered(self.spec.first_family()).first() {
                    Some(ip) => keep(*ip),
                    None => {
                        return Err(LbError::InvalidService {
                            service: self.service.to_string(),
                            problem:
                                "the policy kept the current address, but the Service has none"
                                    .to_string(),
                        });
                    }
                }
            }
            AddressChoice::Specific(ip) => {
                let ip = IpAddr::from(*ip);
                // Its own namespace's group address, asked for by value;
                // another namespace's is shared only when taken by name.
                let namespace = &self.spec.namespace;
                let own = self.held.contains(&ip) || self.own_internal.contains(&ip);
                if self.current.contains(ip) {
                    keep(ip)
                } else if own && !self.excluded.contains(&ip) {
                    // A move cut short: the Service's own objects hold it
                    // already; where nothing reserved it, verify.
                    Address::at(ip, self.unreserved(ip))
                } else if self.internal.pool_of(ip).is_some() {
                    self.claim_unreserved(ip).await?
                } else if self
                    .groups
                    .iter()
                    .any(|g| g.ip == ip && &g.namespace == namespace)
                {
                    self.share(ip)?
                } else {
                    self.claim_specific(ip).await?
                }
            }
            AddressChoice::FromPool(pool) if pool.starts_with(POOL_PREFIX) => {
                match self.groups.iter().find(|g| &g.pool == pool) {
                    Some(group) if self.current.contains(group.ip) => keep(group.ip),
                    Some(group) => self.share(group.ip)?,
                    None => return Err(self.unknown_pool(pool)),
                }
            }
            AddressChoice::FromPool(pool) if self.internal.named(pool).is_some() => {
                return self.internal_from_pool(pool).map(Resolved::from);
            }
            AddressChoice::FromPool(pool) => {
                let kept = self
                    .current
                    .iter()
                    .find(|ip| self.source.pool_of(*ip) == Some(pool.as_str()));
                match kept {
                    Some(ip) => keep(ip),
                    None => return self.claim_from_pool(pool).await,
                }
            }
        };
        Ok(Resolved::Ready(address))
    }

    /// The Service's address of `family` beside the one its policy decided
    /// (contract 0.2.0 decides one): the current one while a pool of the
    /// gateway holds it, else one from the first pool offering `family`.
    /// `None` when no pool does.
    /// An internal first address takes an internal second one.
    pub async fn resolve_second(
        &self,
        family: IpFamily,
        internal: bool,
    ) -> Result<Option<Resolved>, LbError> {
        if internal {
            return match self.internal.pool_of_family(family) {
                Some(pool) => self.internal_from_pool(pool).map(|a| Some(a.into())),
                None => Ok(None),
            };
        }
        if let Some(ip) = self.current.get(family)
            && self.source.pool_of(ip).is_some()
        {
            return Ok(Some(Address::at(ip, false).into()));
        }
        match self.source.pools_of(family).first() {
            Some(pool) => self.claim_from_pool(pool).await.map(Some),
            None => Ok(None),
        }
    }

    /// Joins the address the Service's sharing group holds. Its claim (IP
    /// Spaces) stays with the Service that made it; on IP blocks the
    /// address is verified like any new one, sharers not counting.
    fn share(&self, ip: IpAddr) -> Result<Address, LbError> {
        if self.excluded.contains(&ip) {
            return Err(self.in_use(ip, "another owner that claimed it at the same time".into()));
        }
        Ok(Address::at(ip, !self.source.is_spaces()))
    }

    /// The pools the source offers, without their free counts.
    fn pools(&self) -> Vec<AddressPool> {
        let mut pools = self.source.address_pools(&HashSet::new());
        pools.extend(self.internal.address_pools(&HashSet::new()));
        pools
    }

    /// Whether nothing in VCD reserves `ip` for the Service, so its claim
    /// is verified once written: IP blocks and internal ranges.
    fn unreserved(&self, ip: IpAddr) -> bool {
        !self.source.is_spaces() || self.internal.pool_of(ip).is_some()
    }

    /// An address of the internal pool `pool`: the Service's current one,
    /// else one its virtual services already use, else a free one.
    fn internal_from_pool(&self, pool: &str) -> Result<Address, LbError> {
        let in_pool = |ip: &IpAddr| self.internal.pool_of(*ip) == Some(pool);
        if let Some(ip) = self.current.iter().find(in_pool) {
            return Ok(Address::at(ip, false));
        }
        let usable = |ip: &&IpAddr| in_pool(ip) && !self.excluded.contains(ip);
        if let Some(ip) = self.own_internal.iter().find(usable) {
            return Ok(Address::at(*ip, true));
        }
        let block = self
            .internal
            .named(pool)
            .ok_or_else(|| self.unknown_pool(pool))?;
        let used: HashSet<IpAddr> = self.used.iter().map(|(ip, _)| *ip).collect();
        ipam::pick_block_address(&block.ranges, &[], &used, self.excluded, self.seed)
            .map(|ip| Address::at(ip, true))
            .ok_or_else(|| self.exhausted(pool, String::new()))
    }

    /// `pool` has no free address; `detail` says more where known.
    fn exhausted(&self, pool: &str, detail: String) -> LbError {
        LbError::PoolExhausted {
            service: self.service.to_string(),
            pool: self
                .pools()
                .iter()
                .find(|p| p.name == pool)
                .map_or_else(|| pool.to_string(), hints::extent),
            detail,
        }
    }

    /// An address nothing in VCD reserves (IP blocks, internal ranges):
    /// VCD is asked who holds it before anything is written, as the
    /// gateway view may predate another owner's objects on it.
    async fn claim_unreserved(&self, ip: IpAddr) -> Result<Address, LbError> {
        if self.excluded.contains(&ip) {
            return Err(self.in_use(ip, "another owner that claimed it at the same time".into()));
        }
        let text = ip.to_string();
        let holders = GatewayView::read_holders(
            self.client,
            self.gateway_id,
            std::slice::from_ref(&text),
            self.nat,
        )
        .await
        .map_err(LbError::vcd(
            self.service,
            "looking up who holds the requested address".into(),
        ))?;
        if let Some(holder) = holders.other_holder(&text, self.owner) {
            return Err(self.in_use(ip, holder));
        }
        if let Some((_, category)) = self.used.iter().find(|(u, _)| *u == ip) {
            return Err(self.in_use(ip, format!("the gateway ({category})")));
        }
        Ok(Address::at(ip, true))
    }

    fn unknown_pool(&self, pool: &str) -> LbError {
        LbError::UnknownPool {
            service: self.service.to_string(),
            pool: pool.to_string(),
            offered: hints::extents(&self.pools()),
        }
    }

    fn in_use(&self, ip: IpAddr, holder: String) -> LbError {
        LbError::AddressInUse {
            service: self.service.to_string(),
            ip: ip.to_string(),
            holder,
        }
    }

    async fn claim_specific(&self, ip: IpAddr) -> Result<Address, LbError> {
        if self.excluded.contains(&ip) {
            return Err(self.in_use(ip, "another owner that claimed it at the same time".into()));
        }
        let vcd = |action: &str| LbError::vcd(self.service, action.to_string());
        match self.source {
            IpSource::Blocks { .. } => self.claim_unreserved(ip).await,
            IpSource::Spaces(_) => {
                let space = self
                    .source
                    .space_of(ip)
                    .ok_or_else(|| self.unknown_pool(&format!("(the IP Space holding {ip})")))?;
                if let Some(allocation) = self.noted_allocation(space).await?
                    && allocation.value == ip.to_string()
                {
                    return self.claim(space, allocation);
                }
                let text = ip.to_string();
                let (allocation, holder) = allocations::space_holder(
                    self.client,
                    space,
                    &text,
                    self.owner,
                    self.take_unused,
                )
                .await
                .map_err(vcd("looking up the IP Space allocation"))?;
                if let Some(holder) = holder {
                    return Err(self.in_use(ip, holder));
                }
                match allocation {
                    Some(ours) => self.claim(space, ours),
                    None => Ok(self.allocate(space, ip)),
                }
            }
        }
    }

    async fn claim_from_pool(&self, pool: &str) -> Result<Resolved, LbError> {
        let vcd = |action: String| LbError::vcd(self.service, action);
        let exhausted = |detail: String| self.exhausted(pool, detail);
        match self.source {
            IpSource::Blocks { reserved, .. } => {
                let block = self
                    .source
                    .block_named(pool)
                    .ok_or_else(|| self.unknown_pool(pool))?;
                let used: HashSet<IpAddr> = self.used.iter().map(|(ip, _)| *ip).collect();
                let ip = ipam::pick_block_address(
                    &block.ranges,
                    reserved,
                    &used,
                    self.excluded,
                    self.seed,
                )
                .ok_or_else(|| exhausted(String::new()))?;
                Ok(Address::at(ip, true).into())
            }
            IpSource::Spaces(_) => {
                let space = self
                    .source
                    .space_named(pool)
                    .ok_or_else(|| self.unknown_pool(pool))?;
                // A claim left by an interrupted reconcile is reused, not doubled.
                let claims =
                    allocations::find_claims(self.client, std::slice::from_ref(space), self.owner)
                        .await
                        .map_err(vcd(format!("reading IP Space {} allocations", space.name)))?;
                let reusable = claims
                    .iter()
                    .filter_map(|(_, a)| a.value.parse::<IpAddr>().ok())
                    .find(|ip| !self.excluded.contains(ip));
                if let Some(ip) = reusable {
                    return Ok(Address::at(ip, false).into());
                }
                if let Some(allocation) = self.noted_allocation(space).await? {
                    return self.claim(space, allocation).map(Resolved::from);
                }
                if self.client.api_version() < ALLOCATE_BY_VALUE {
                    return Ok(self.allocate_any(space));
                }
                // A refused allocation (taken meanwhile, or held by an org
                // whose allocations this one cannot see) moves the Service
                // on to the next address in the next pass.
                let candidates =
                    allocations::free_in_space(self.client, space, self.excluded, self.seed)
                        .await
                        .map_err(vcd(format!("reading IP Space {} allocations", space.name)))?;
                match candidates.first() {
                    Some(ip) => Ok(self.allocate(space, *ip).into()),
                    None => Err(exhausted(String::new())),
                }
            }
        }
    }
}

//! Decide: select the Service's policy, run it in a fresh sandbox (it
//! yields to other tasks at every epoch tick), then check its address against VCD (free, or already
//! ours) and turn it into a concrete external address.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};

use super::LbError;
use super::ipam::{self, IpSource};
use super::ownership::OwnerTag;
use crate::policy::Registry;
use crate::policy::model::{AddressChoice, Decision, DecisionInput};
use crate::vcd::VcdClient;

/// Runs the governing policy. The host's contract checks run inside
/// `Policy::decide`; a failure of any kind changes nothing in VCD.
pub async fn run_policy(registry: &Registry, input: DecisionInput) -> Result<Decision, LbError> {
    let policy = registry
        .current()
        .select(&input.service, &input.namespace)?;
    Ok(policy.decide(&input).await?)
}

/// The external address a decision resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    pub ip: Ipv4Addr,
    /// A new IP-block address: nothing in VCD reserves it, so the claim is
    /// verified once our objects hold it.
    pub verify_claim: bool,
}

/// What the resolution needs to know about the Service and the gateway.
pub struct AddressContext<'a> {
    pub client: &'a VcdClient,
    pub gateway_id: &'a str,
    pub source: &'a IpSource,
    pub service: &'a str,
    /// The Service's owner: IP Space claims carry its tag.
    pub owner: &'a OwnerTag,
    /// Seeds the spread of picks (the Service's names hash).
    pub seed: &'a str,
    pub current: Option<Ipv4Addr>,
    /// Addresses lost to another owner in this reconcile.
    pub excluded: &'a HashSet<Ipv4Addr>,
}

fn ipv4(service: &str, ip: IpAddr) -> Result<Ipv4Addr, LbError> {
    match ip {
        IpAddr::V4(v4) => Ok(v4),
        IpAddr::V6(_) => Err(LbError::InvalidService {
            service: service.to_string(),
            problem: format!(
                "address {ip}: NSX ALB virtual services here take IPv4 addresses only; set ipFamilies to IPv4"
            ),
        }),
    }
}

impl AddressContext<'_> {
    pub async fn resolve(&self, choice: &AddressChoice) -> Result<Address, LbError> {
        let keep = |ip| Address {
            ip,
            verify_claim: false,
        };
        match choice {
            AddressChoice::KeepCurrent => match self.current {
                Some(ip) => Ok(keep(ip)),
                None => Err(LbError::InvalidService {
                    service: self.service.to_string(),
                    problem: "the policy kept the current address, but the Service has none"
                        .to_string(),
                }),
            },
            AddressChoice::Specific(ip) => {
                let ip = ipv4(self.service, IpAddr::from(*ip))?;
                if self.current == Some(ip) {
                    return Ok(keep(ip));
                }
                self.claim_specific(ip).await
            }
            AddressChoice::FromPool(pool) => {
                if let Some(current) = self.current
                    && self.source.pool_of(current) == Some(pool.as_str())
                {
                    return Ok(keep(current));
                }
                self.claim_from_pool(pool).await
            }
        }
    }

    fn in_use(&self, ip: Ipv4Addr, holder: String) -> LbError {
        LbError::AddressInUse {
            service: self.service.to_string(),
            ip: ip.to_string(),
            holder,
        }
    }

    async fn claim_specific(&self, ip: Ipv4Addr) -> Result<Address, LbError> {
        if self.excluded.contains(&ip) {
            return Err(self.in_use(ip, "another owner that claimed it at the same time".into()));
        }
        let vcd = |action: &str| LbError::vcd(self.service, action.to_string());
        match self.source {
            IpSource::Blocks { .. } => {
                let used = ipam::used_addresses(self.client, self.gateway_id)
                    .await
                    .map_err(vcd("reading the gateway's used IP addresses"))?;
                if let Some((_, category)) = used.iter().find(|(u, _)| *u == ip) {
                    return Err(self.in_use(ip, format!("the gateway ({category})")));
                }
                Ok(Address {
                    ip,
                    verify_claim: true,
                })
            }
            IpSource::Spaces(_) => {
                let space = self
                    .source
                    .space_of(ip)
                    .ok_or_else(|| LbError::UnknownPool {
                        service: self.service.to_string(),
                        pool: format!("(the IP Space holding {ip})"),
                    })?;
                let text = ip.to_string();
                let (allocation, holder) =
                    ipam::space_holder(self.client, space, &text, self.owner)
                        .await
                        .map_err(vcd("looking up the IP Space allocation"))?;
                if let Some(holder) = holder {
                    return Err(self.in_use(ip, holder));
                }
                ipam::allocate_and_claim(self.client, space, Some(&text), allocation, self.owner)
                    .await
                    .map_err(vcd(&format!(
                        "allocating {ip} from IP Space {}",
                        space.name
                    )))?;
                Ok(Address {
                    ip,
                    verify_claim: false,
                })
            }
        }
    }

    async fn claim_from_pool(&self, pool: &str) -> Result<Address, LbError> {
        let vcd = |action: String| LbError::vcd(self.service, action);
        let exhausted = |detail: String| LbError::PoolExhausted {
            service: self.service.to_string(),
            pool: pool.to_string(),
            detail,
        };
        match self.source {
            IpSource::Blocks {
                pool: name,
                ranges,
                reserved,
            } => {
                if name != pool {
                    return Err(LbError::UnknownPool {
                        service: self.service.to_string(),
                        pool: pool.to_string(),
                    });
                }
                let used: HashSet<Ipv4Addr> = ipam::used_addresses(self.client, self.gateway_id)
                    .await
                    .map_err(vcd("reading the gateway's used IP addresses".into()))?
                    .into_iter()
                    .map(|(ip, _)| ip)
                    .collect();
                let ip =
                    ipam::pick_block_address(ranges, reserved, &used, self.excluded, self.seed)
                        .ok_or_else(|| exhausted(String::new()))?;
                Ok(Address {
                    ip,
                    verify_claim: true,
                })
            }
            IpSource::Spaces(_) => {
                let space = self
                    .source
                    .space_named(pool)
                    .ok_or_else(|| LbError::UnknownPool {
                        service: self.service.to_string(),
                        pool: pool.to_string(),
                    })?;
                // A claim left by an interrupted reconcile is reused, not doubled.
                let claims =
                    ipam::find_claims(self.client, std::slice::from_ref(space), self.owner)
                        .await
                        .map_err(vcd(format!("reading IP Space {} allocations", space.name)))?;
                let reusable = claims
                    .iter()
                    .filter_map(|(_, a)| a.value.parse::<Ipv4Addr>().ok())
                    .find(|ip| !self.excluded.contains(ip));
                if let Some(ip) = reusable {
                    return Ok(Address {
                        ip,
                        verify_claim: false,
                    });
                }
                let value = ipam::allocate_and_claim(self.client, space, None, None, self.owner)
                    .await
                    .map_err(|source| match source {
                        crate::vcd::VcdError::TaskFailed { ref message, .. } => {
                            exhausted(format!(": {message}"))
                        }
                        source => LbError::vcd(
                            self.service,
                            format!("allocating a floating IP from IP Space {}", space.name),
                        )(source),
                    })?;
                let ip = value.parse().map_err(|_| {
                    exhausted(format!(": VCD allocated {value:?}, not an IPv4 address"))
                })?;
                Ok(Address {
                    ip,
                    verify_claim: false,
                })
            }
        }
    }
}

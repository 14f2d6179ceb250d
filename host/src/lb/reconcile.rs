//! The reconcile behind `ensure`: observe → decide → plan → apply →
//! verify, passes repeated while another owner contests the address.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::lb::LoadBalancers;
use crate::lb::decide::address::{Address, AddressContext};
use crate::lb::decide::asking::Decided;
use crate::lb::decide::current::{Currents, Found};
use crate::lb::decide::dual_stack::Second;
use crate::lb::decide::sharing;
use crate::lb::errors::LbError;
use crate::lb::observe::objects::{GatewayView, ServiceObjects};
use crate::lb::ownership::OwnerTag;
use crate::lb::plan::drain;
use crate::lb::plan::member_groups::Members;
use crate::lb::plan::op::Op;
use crate::lb::plan::upstream::UpstreamObjects;
use crate::lb::plan::virtual_service_diff;
use crate::lb::plan::{self, Target, claims};
use crate::lb::ranges::family_of;
use crate::lb::service::{NodeSpec, ServiceSpec};
use crate::lb::tls::{self, Leftovers, Pinned};
use crate::lb::vips::Vips;

/// How often a reconcile moves to another address after losing one to a
/// concurrent owner before it gives up until the next reconcile.
const MAX_CLAIM_ATTEMPTS: u32 = 4;

/// What a converged reconcile reports.
pub(super) struct Converged {
    pub vips: Vips,
    /// One-arm internal VIPs of the Service's virtual services.
    pub internal: Vec<Ipv4Addr>,
    pub writes: usize,
    /// What the last pass's writes of load-balancer objects did.
    pub changes: Vec<String>,
    /// Whether the Service had objects before.
    pub existed: bool,
    pub warnings: Vec<String>,
    /// Why a Service preferring two families has one address.
    pub dual_stack_not_served: Option<String>,
    /// When a drain under way ends (Unix seconds): reconcile again then.
    pub drain_ends: Option<u64>,
}

/// A pass's decision, made before anything is written.
pub(super) struct Planned {
    pub ops: Vec<Op>,
    /// The external addresses: the decided one, then the second family's.
    pub addresses: Vec<Address>,
    dual_stack_not_served: Option<String>,
    /// New one-arm internal VIPs: nothing reserves them until verified.
    unreserved: Vec<IpAddr>,
    /// Every one-arm internal VIP of the Service.
    pub internal: Vec<Ipv4Addr>,
    warnings: Vec<String>,
    /// Where the pools take their members from.
    pub members: Members,
    /// When a drain under way ends (Unix seconds).
    drain_ends: Option<u64>,
    /// Uploads the virtual services will use; unpinned when the pass ends.
    _pins: Vec<Pinned>,
}

/// How one reconcile pass ended.
enum Pass {
    Done {
        vips: Vips,
        internal: Vec<Ipv4Addr>,
        writes: usize,
        /// What its writes of load-balancer objects did.
        changes: Vec<String>,
        /// The policy's warnings, for Events on the Service.
        warnings: Vec<String>,
        dual_stack_not_served: Option<String>,
        drain_ends: Option<u64>,
    },
    /// Another owner holds `ip` too; start over without it.
    Contested {
        ip: IpAddr,
        holder: String,
        writes: usize,
    },
}

impl LoadBalancers {
    /// What is refused before anything is read: a malformed Service, a
    /// sharing key the mode cannot serve, no port with a node port.
    pub(super) fn admissible(&self, service: &ServiceSpec) -> Result<(), LbError> {
        service.check()?;
        self.check_sharing(service)?;
        if !service
            .ports
            .iter()
            .any(|p| p.node_port.is_some_and(|n| n > 0))
        {
            return Err(LbError::InvalidService {
                service: service.key(),
                problem: "no port has a nodePort; NSX ALB pools forward to node ports (allocateLoadBalancerNodePorts: false is not supported)".to_string(),
            });
        }
        Ok(())
    }

    /// Reconciles until no other owner contests the address.
    pub(super) async fn converge(
        &self,
        service: &ServiceSpec,
        nodes: &[NodeSpec],
    ) -> Result<Converged, LbError> {
        self.admissible(service)?;
        let mut excluded = HashSet::new();
        let mut writes = 0;
        let mut existed = None;
        let mut last = None;
        let mut reobserved = false;
        for _ in 0..MAX_CLAIM_ATTEMPTS {
            let pass = match self.pass(service, nodes, &excluded, &mut existed).await {
                // An object our observation missed landed meanwhile (a task
                // left in flight by a stopped process): look again once.
                Err(error) if !reobserved && error.is_duplicate_name() => {
                    tracing::info!(service = %service.key(), %error, "an object appeared since the gateway was read; reading it again");
                    self.snapshot.invalidate();
                    reobserved = true;
                    continue;
                }
                other => other?,
            };
            match pass {
                Pass::Done {
                    vips,
                    internal,
                    writes: made,
                    changes,
                    warnings,
                    dual_stack_not_served,
                    drain_ends,
                } => {
                    return Ok(Converged {
                        vips,
                        internal,
                        writes: writes + made,
                        changes,
                        existed: existed.unwrap_or(false),
                        warnings,
                        dual_stack_not_served,
                        drain_ends,
                    });
                }
                Pass::Contested {
                    ip,
                    holder,
                    writes: made,
                } => {
                    tracing::info!(service = %service.key(), %ip, %holder, "address taken by another owner at the same time; moving to another");
                    writes += made;
                    excluded.insert(ip);
                    last = Some((ip, holder));
                }
            }
        }
        let (ip, holder) = last.unwrap_or((IpAddr::V4(Ipv4Addr::UNSPECIFIED), String::new()));
        Err(LbError::ClaimLost {
            service: service.key(),
            ip: ip.to_string(),
            holder,
            attempts: MAX_CLAIM_ATTEMPTS,
        })
    }

    async fn pass(
        &self,
        service: &ServiceSpec,
        nodes: &[NodeSpec],
        excluded: &HashSet<IpAddr>,
        existed: &mut Option<bool>,
    ) -> Result<Pass, LbError> {
        let (view, observed) = self.observe(service).await?;
        let owner = self.owner(service);
        let upstream = match observed.is_empty() {
            true => self.upstream_objects(service, &view),
            false => UpstreamObjects::default(),
        };
        let taking_over = upstream.deletes.len();
        existed.get_or_insert(!observed.is_empty() || taking_over > 0);
        if taking_over > 0 {
            tracing::info!(service = %service.key(), objects = taking_over, ip = ?upstream.ip, "taking over the upstream CCM's load balancer: deciding first");
            self.adopt_upstream_claims(service).await?;
        }
        let found = Found {
            view: &view,
            observed: &observed,
            upstream_ip: upstream.ip.as_deref(),
            owner: &owner,
            excluded,
        };
        let currents = self.current_addresses(service, &found).await?;
        if let Some((ip, holder)) = currents.contested() {
            return Ok(Pass::Contested {
                ip,
                holder,
                writes: 0,
            });
        }
        let planned = self
            .plan(service, nodes, &found, &currents)
            .await
            .map_err(|source| match taking_over {
                0 => source,
                objects => LbError::TakeoverWaiting {
                    objects,
                    source: Box::new(source),
                },
            })?;
        let mut writes = 0;
        if taking_over > 0 {
            writes += self.remove_upstream(service, upstream).await?;
        }
        let Planned {
            mut ops,
            addresses,
            dual_stack_not_served,
            mut unreserved,
            internal,
            warnings,
            members,
            drain_ends,
            _pins,
        } = planned;
        self.plan_member_sets(service, &owner, &members, &mut ops)
            .await?;
        for address in &addresses {
            if address.verify_claim || currents.remembered(address.ip) {
                unreserved.push(address.ip);
            }
        }
        let vips = addresses.iter().map(|a| a.ip).collect::<Vips>();
        let changes: Vec<String> = ops.iter().map(Op::describe).collect();
        let applied = self.applier(&service.name).apply(ops, &observed).await;
        // A write refused because a racing owner took the address first is
        // a lost claim too, not a failure.
        writes += match applied {
            Err(error) if unreserved.is_empty() => return Err(error),
            Err(error) => match self.verify(service, &owner, &unreserved).await? {
                Some((ip, holder)) => {
                    return Ok(Pass::Contested { ip, holder, writes });
                }
                None => return Err(error),
            },
            Ok(made) => made,
        };
        if !unreserved.is_empty()
            && let Some((ip, holder)) = self.verify(service, &owner, &unreserved).await?
        {
            return Ok(Pass::Contested { ip, holder, writes });
        }
        let after = self
            .plan_after(service, &view, &observed, &owner, &vips)
            .await?;
        self.applier(&service.key()).apply(after, &observed).await?;
        Ok(Pass::Done {
            vips,
            internal,
            writes,
            changes,
            warnings,
            dual_stack_not_served,
            drain_ends,
        })
    }

    /// The writes that follow a pass's, once its address is verified: on IP
    /// Spaces, the release of claims a move left (an address held, or still
    /// in the status, beside the new ones; perhaps a release cut short) and
    /// the rewrite of claims in an older tag format; then the deletes of
    /// uploads the Service no longer uses.
    pub(super) async fn plan_after(
        &self,
        service: &ServiceSpec,
        view: &GatewayView,
        observed: &ServiceObjects,
        owner: &OwnerTag,
        vips: &Vips,
    ) -> Result<Vec<Op>, LbError> {
        let mut ops = Vec::new();
        let moved = self
            .external_ips(observed)
            .into_iter()
            .chain(service.reported_ips.iter().filter_map(|r| r.parse().ok()))
            .any(|ip| !vips.contains(ip));
        if self.source.is_spaces() && moved {
            ops.extend(
                claims::other_releases(&self.client, self.source.spaces(), view, owner, vips)
                    .await?,
            );
        }
        if self.source.is_spaces() && observed.predates_format() {
            let adopt = claims::claims_to_adopt(&self.client, self.source.spaces(), owner)
                .await
                .map_err(LbError::vcd(
                    &service.key(),
                    "finding the Service's IP Space claims of an older tag format".into(),
                ))?;
            ops.extend(adopt);
        }
        let leftovers = Leftovers {
            referenced: observed.certificate_ids(),
            secrets: tls::secret_keys(service),
        };
        ops.extend(self.plan_prunes(&service.key(), &leftovers).await);
        Ok(ops)
    }

    /// Adds the writes of the IP sets the pools take their members from: the
    /// set first (the pools name it; a node join is this one write), and a
    /// set of the Service's own the pools no longer use last (no longer
    /// `Local`).
    pub(super) async fn plan_member_sets(
        &self,
        service: &ServiceSpec,
        owner: &OwnerTag,
        members: &Members,
        ops: &mut Vec<Op>,
    ) -> Result<(), LbError> {
        if let Members::Group(want) = members {
            let (group, write) = self
                .member_groups
                .plan_set(&self.client, &self.gateway, want, owner, &service.key())
                .await?;
            plan::point_at_group(ops, &group);
            ops.splice(0..0, write);
        }
        if !matches!(members, Members::Group(want) if want.own) {
            ops.extend(self.own_set_removal(owner, &self.names(service)).await?);
        }
        Ok(())
    }

    /// Decides and plans without writing anything but address claims and,
    /// last, certificate uploads: the policy's decision, the address it
    /// resolves to, internal VIPs, and the writes that would converge the
    /// Service.
    pub(super) async fn plan(
        &self,
        service: &ServiceSpec,
        nodes: &[NodeSpec],
        found: &Found<'_>,
        currents: &Currents,
    ) -> Result<Planned, LbError> {
        let Found {
            view,
            observed,
            owner,
            excluded,
            ..
        } = *found;
        // An address of a family that cannot be served here (IPv6 after a
        // change to one-arm mode) is not kept: the Service moves off it.
        let current = currents
            .vips()
            .iter()
            .filter(|ip| self.family_unavailable(family_of(*ip)).is_none())
            .collect::<Vips>();
        let first_current = current.ordered(service.first_family()).first().copied();
        // A group address another owner holds too, or that this reconcile
        // lost to one, is not offered: the group moves to a fresh one.
        let groups = sharing::groups(view, owner, |ip| {
            self.source.pool_of(ip).is_some()
                && !excluded.contains(&ip)
                && view.other_holder(&ip.to_string(), owner).is_none()
        });
        let Decided {
            decision,
            mut certificates,
            secrets,
            library,
            engine_groups,
        } = self.decide(service, view, first_current, &groups).await?;
        for warning in &decision.warnings {
            tracing::warn!(service = %service.key(), %warning, "policy warning");
        }
        let drains = decision.traffic.iter().any(|t| t.drain_seconds > 0);
        let members = self.members_for(service, nodes, owner, drains)?;
        let names = self.names(service);
        if let Some(wanted) = &decision.service_engine_group {
            self.check_engine_group_room(service, &names, observed, wanted, &engine_groups)
                .await?;
        }
        let seed = format!("{}/{}", self.config.cluster_id, service.uid);
        let context = AddressContext {
            client: &self.client,
            gateway_id: &self.gateway.id,
            nat: self.mode.uses_nat(),
            source: &self.source,
            journal: self.journal.as_ref(),
            spec: service,
            service: &service.key(),
            owner,
            seed: &seed,
            current,
            held: &self.external_ips(observed).into_iter().collect(),
            excluded,
            used: &view.used_addresses(),
            groups: &groups,
        };
        let address = context.resolve(&decision.address).await?;
        self.check_family(service, address.ip)?;
        if owner.share.is_some() {
            self.check_ports_free(service, view, owner, &decision, address.ip)?;
        }
        let (second, dual_stack_not_served) = match self
            .second_address(service, &context, owner, address.ip)
            .await?
        {
            Second::Served(second) => (Some(second), None),
            Second::NotServed(why) => (None, Some(why)),
            Second::NotAsked => (None, None),
        };
        let addresses: Vec<Address> = std::iter::once(address).chain(second).collect();
        let external = addresses.iter().map(|a| a.ip).collect::<Vips>();
        let (internal_ips, unreserved) =
            self.internal_ips(service, &names, view, observed, excluded, &seed)?;
        // Last, so a refusal above leaves no upload behind.
        let pins = self
            .upload_used(service, &decision, &secrets, &library, &mut certificates)
            .await?;
        let target = Target {
            mode: self.mode,
            gateway: &self.gateway,
            names: &names,
            owner,
            service,
            nodes,
            members: &members,
            decision: &decision,
            certificates: &certificates,
            external,
            internal_ips: &internal_ips,
        };
        let mut desired = plan::desired(&target);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let drain_ends = drain::hold_leaving(&self.client, &mut desired, observed, now)
            .await
            .map_err(LbError::vcd(
                &service.key(),
                "reading the pool members of a drain".into(),
            ))?;
        let edited = match service.read_unsummarised {
            true => virtual_service_diff::edited_lists(&self.client, &desired, observed)
                .await
                .map_err(LbError::vcd(
                    &service.key(),
                    "reading the HTTP rule lists for the drift check".into(),
                ))?,
            false => Vec::new(),
        };
        Ok(Planned {
            ops: plan::diff(&desired, observed, &edited),
            addresses,
            dual_stack_not_served,
            unreserved: unreserved.into_iter().map(IpAddr::V4).collect(),
            internal: internal_ips.values().copied().collect(),
            warnings: decision.warnings,
            members,
            drain_ends,
            _pins: pins,
        })
    }
}

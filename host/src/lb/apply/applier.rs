//! Apply: the planned writes, in order, each one request plus its task,
//! through the typed calls of `vcd::resources`. Creates and updates do not
//! read the object back (the task names the new id), which keeps a
//! reconcile to a handful of calls; creates whose answer is lost are
//! recognised by name rather than made twice. Every write that lands is
//! recorded in the gateway snapshot; a failed one drops the snapshot, as
//! VCD then knows something it does not.

use std::collections::HashMap;

use crate::lb::apply::monitors;
use crate::lb::context::Context;
use crate::lb::errors::LbError;
use crate::lb::journal::AllocationJournal;
use crate::lb::observe::catalog::Catalog;
use crate::lb::observe::monitors::Monitors;
use crate::lb::observe::objects::ServiceObjects;
use crate::lb::observe::snapshot::{Change, GatewaySnapshot};
use crate::lb::plan::member_groups::MemberGroups;
use crate::lb::plan::op::Op;
use crate::lb::service::ServiceSpec;
use crate::lb::tls::UploadPins;
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::ip_set::IpSet;
use crate::vcd::resources::nat::NatRule;
use crate::vcd::resources::pool::{Pool, PoolSummary};
use crate::vcd::resources::virtual_service::{VirtualService, VirtualServiceSummary};
use crate::vcd::{VcdClient, VcdError};

/// The ids of the Service's objects by name: those observed, then those
/// created; a virtual service created here also keeps its engine group.
pub(super) struct Ids {
    pools: HashMap<String, String>,
    /// IP sets written in this plan.
    ip_sets: HashMap<String, String>,
    /// The firewall's IP sets and port profiles written in this plan.
    pub firewall_groups: HashMap<String, String>,
    pub port_profiles: HashMap<String, String>,
    virtual_services: HashMap<String, (String, Option<EntityRef>)>,
}

pub struct Applier<'a> {
    pub client: &'a VcdClient,
    pub member_groups: &'a MemberGroups,
    /// Uploads reconciles in progress use: never deleted.
    pub upload_pins: &'a UploadPins,
    pub catalog: &'a Catalog,
    pub snapshot: &'a GatewaySnapshot,
    /// The cluster's tenant monitors, where VCD has them (API 39.0+).
    pub monitors: Option<&'a Monitors>,
    pub gateway_id: &'a str,
    pub service: &'a str,
    /// Where allocations are noted before they are made, and the Service
    /// whose note it is (none where no allocation is planned).
    pub journal: Option<(&'a dyn AllocationJournal, &'a ServiceSpec)>,
}

impl<'a> Applier<'a> {
    /// The applier of `service`'s writes (its name, for messages).
    pub fn new(ctx: &'a Context, service: &'a str) -> Self {
        Self {
            client: &ctx.client,
            member_groups: &ctx.member_groups,
            upload_pins: &ctx.upload_pins,
            catalog: &ctx.catalog,
            snapshot: &ctx.snapshot,
            monitors: ctx.monitoring.tenant.then_some(&*ctx.monitors),
            gateway_id: &ctx.gateway.id,
            service,
            journal: None,
        }
    }

    /// The applier of a reconcile of `spec`, which may allocate its address.
    pub fn noting(ctx: &'a Context, service: &'a str, spec: &'a ServiceSpec) -> Self {
        Self {
            journal: Some((ctx.journal.as_ref(), spec)),
            ..Self::new(ctx, service)
        }
    }

    /// Runs `ops`; returns how many writes it made.
    pub async fn apply(&self, ops: Vec<Op>, observed: &ServiceObjects) -> Result<usize, LbError> {
        let mut ids = Ids {
            pools: observed
                .pools
                .iter()
                .map(|(name, pool)| (name.clone(), pool.object.id.clone()))
                .collect(),
            virtual_services: observed
                .virtual_services
                .iter()
                .map(|(name, vs)| (name.clone(), (vs.object.id.clone(), None)))
                .collect(),
            ip_sets: HashMap::new(),
            firewall_groups: HashMap::new(),
            port_profiles: HashMap::new(),
        };
        let mut writes = 0;
        for op in ops {
            match self.apply_one(op, &mut ids).await {
                Ok(wrote) => writes += usize::from(wrote),
                Err(error) => {
                    self.snapshot.invalidate();
                    if let Some(monitors) = self.monitors {
                        monitors.invalidate().await;
                    }
                    return Err(error);
                }
            }
        }
        Ok(writes)
    }

    /// Runs one write; `false` when another reconcile made it meanwhile.
    async fn apply_one(&self, op: Op, ids: &mut Ids) -> Result<bool, LbError> {
        let (client, gateway) = (self.client, self.gateway_id);
        let change = match op {
            Op::Firewall(op) => {
                self.apply_firewall(op, ids).await?;
                // The snapshot holds no firewall object.
                return Ok(true);
            }
            Op::Address(op) => {
                self.apply_address(op).await?;
                return Ok(true);
            }
            Op::DeleteUpload { id, alias } => return Ok(self.delete_upload(&id, &alias).await),
            Op::UploadCertificate(upload) => return self.upload_certificate(upload).await,
            Op::WriteIpSet(set) => return self.write_ip_set(set, ids).await,
            Op::WriteMonitor(monitor) => {
                let action = format!("writing health monitor {}", monitor.name);
                return monitors::write(client, self.tenant()?, gateway, monitor)
                    .await
                    .map_err(self.failed(action));
            }
            Op::AssignMonitor { pool, monitor } => {
                let action = format!("assigning health monitor {monitor} to pool {pool}");
                let id = ids.pools.get(&pool).cloned().ok_or_else(|| {
                    self.failed(action.clone())(VcdError::Missing {
                        what: "pool",
                        name: pool.clone(),
                        scope: "on the gateway".to_string(),
                    })
                })?;
                let pool = EntityRef::new(pool, id);
                return monitors::assign(client, self.tenant()?, gateway, &monitor, pool)
                    .await
                    .map_err(self.failed(action));
            }
            Op::DeleteMonitor { id, name } => {
                let action = format!("deleting health monitor {name}");
                return monitors::delete(client, self.tenant()?, gateway, &id, &name)
                    .await
                    .map_err(self.failed(action));
            }
            Op::DeleteIpSet { id, name } => {
                let mut known = self.member_groups.writing().await;
                let deleted = client.ip_sets().delete(gateway, &id).await;
                match deleted {
                    Ok(()) => known.removed(&name),
                    Err(_) => known.forget(),
                }
                deleted.map_err(self.failed(format!("deleting IP set {name}")))?;
                return Ok(true);
            }
            Op::DeleteNat { id, name } => client
                .nat_rules()
                .delete(gateway, &id)
                .await
                .map(|()| Change::Removed(id))
                .map_err(self.failed(format!("deleting NAT rule {name}")))?,
            Op::DeleteVirtualService { id, name } => client
                .virtual_services()
                .delete(gateway, &id)
                .await
                .map(|()| Change::Removed(id))
                .map_err(self.failed(format!("deleting virtual service {name}")))?,
            Op::DeletePool { id, name } => {
                client
                    .pools()
                    .delete(gateway, &id)
                    .await
                    .map_err(self.failed(format!("deleting pool {name}")))?;
                if let Some(monitors) = self.monitors {
                    monitors.writing().await.pool_deleted(&id);
                }
                Change::Removed(id)
            }
            Op::UpdatePool { id, pool } => {
                let pool = self.complete_pool(pool, &ids.ip_sets);
                self.write_pool(Some(id), pool, ids).await?
            }
            Op::CreatePool(pool) => {
                let pool = self.complete_pool(pool, &ids.ip_sets);
                self.write_pool(None, pool, ids).await?
            }
            Op::UpdateVirtualService { id, vs } => {
                let vs = self.complete(vs, &ids.pools).await?;
                client
                    .virtual_services()
                    .update(&id, &vs)
                    .await
                    .map_err(self.failed(format!("updating virtual service {}", vs.name)))?;
                Change::VirtualService(VirtualServiceSummary::of(id, &vs))
            }
            Op::CreateVirtualService(vs) => {
                let vs = self.complete(vs, &ids.pools).await?;
                let created = client.virtual_services().create(&vs).await;
                match &created {
                    // The group may be full now; read the groups again next time.
                    Err(_) => self.catalog.forget_engine_groups(),
                    Ok(_) => self
                        .catalog
                        .count_virtual_service(&vs.service_engine_group_ref.id),
                }
                let id = created
                    .map_err(self.failed(format!("creating virtual service {}", vs.name)))?;
                let group = Some(vs.service_engine_group_ref.clone());
                ids.virtual_services
                    .insert(vs.name.clone(), (id.clone(), group));
                Change::VirtualService(VirtualServiceSummary::of(id, &vs))
            }
            Op::PutHttpRules { vs, rules } => {
                let action = format!(
                    "writing the {} of virtual service {vs}",
                    rules.kind().segment()
                );
                let (id, _) = ids.virtual_services.get(&vs).cloned().ok_or_else(|| {
                    self.failed(action.clone())(VcdError::Missing {
                        what: "virtual service",
                        name: vs.clone(),
                        scope: "on the gateway".to_string(),
                    })
                })?;
                client
                    .http_policies()
                    .put_rules(gateway, &id, &vs, &rules)
                    .await
                    .map_err(self.failed(action))?;
                // The summaries do not show rules: nothing to record.
                return Ok(true);
            }
            Op::RecordVirtualService { id, mut vs } => {
                // One created in this plan keeps the group it was created in.
                let created = ids.virtual_services.get(&vs.name).cloned();
                let id = match (id, created) {
                    (Some(id), _) => id,
                    (None, Some((id, group))) => {
                        if let Some(group) = group {
                            vs.service_engine_group_ref = group;
                        }
                        id
                    }
                    (None, None) => {
                        return Err(
                            self.failed(format!("updating virtual service {}", vs.name))(
                                VcdError::Missing {
                                    what: "virtual service",
                                    name: vs.name.clone(),
                                    scope: "on the gateway".to_string(),
                                },
                            ),
                        );
                    }
                };
                let vs = self.complete(vs, &ids.pools).await?;
                client
                    .virtual_services()
                    .update(&id, &vs)
                    .await
                    .map_err(self.failed(format!("updating virtual service {}", vs.name)))?;
                Change::VirtualService(VirtualServiceSummary::of(id, &vs))
            }
            Op::UpdateNat { id, mut rule } => {
                let action = format!("updating NAT rule {}", rule.name);
                // A rule this process wrote is known without its version.
                if rule.version.is_none() {
                    let current = client
                        .nat_rules()
                        .get(gateway, &id)
                        .await
                        .map_err(self.failed(action.clone()))?;
                    rule.version = current.version;
                }
                client
                    .nat_rules()
                    .update(gateway, &id, &rule)
                    .await
                    .map_err(self.failed(action))?;
                // The rule's version moved on, which only a read tells.
                Change::NatRule(NatRule {
                    id: Some(id),
                    version: None,
                    ..rule
                })
            }
            Op::CreateNat(rule) => {
                let id = client
                    .nat_rules()
                    .create(gateway, &rule)
                    .await
                    .map_err(self.failed(format!("creating NAT rule {}", rule.name)))?;
                // Without a version until read: an update reads it first.
                Change::NatRule(NatRule {
                    id: Some(id),
                    version: None,
                    ..rule
                })
            }
        };
        self.snapshot.record(change);
        Ok(true)
    }

    /// Writes the pools' IP set, unless another reconcile of this process
    /// wrote it as wanted since this one planned (a node join reconciles
    /// every Service at once: the set is still written once), and records
    /// it; a refusal for want of a right is noted, as pools then list their
    /// members.
    async fn write_ip_set(&self, mut set: IpSet, ids: &mut Ids) -> Result<bool, LbError> {
        let mut known = self.member_groups.writing().await;
        if let Some(made) = known.whole(&set.name) {
            if made.description == set.description && made.ip_addresses == set.ip_addresses {
                ids.ip_sets
                    .insert(set.name.clone(), made.id.clone().unwrap_or_default());
                return Ok(false);
            }
            if set.id.is_none() {
                set.id.clone_from(&made.id);
            }
        }
        let written = match &set.id {
            None => self.client.ip_sets().create(&set).await,
            Some(_) => self
                .client
                .ip_sets()
                .update(&set)
                .await
                .map(|()| set.clone()),
        };
        let action = match &set.id {
            None => format!("creating IP set {}", set.name),
            Some(_) => format!("updating IP set {}", set.name),
        };
        let written = written
            .inspect_err(|e| {
                known.forget();
                self.member_groups.note_refusal(e, &set.name);
            })
            .map_err(self.failed(action))?;
        ids.ip_sets
            .insert(written.name.clone(), written.id.clone().unwrap_or_default());
        known.wrote(written);
        Ok(true)
    }

    /// Creates (no id) or rewrites the pool, with the ids of the tenant
    /// monitors it lists, and records which monitors it now holds.
    async fn write_pool(
        &self,
        id: Option<String>,
        mut pool: Pool,
        ids: &mut Ids,
    ) -> Result<Change, LbError> {
        let mut known = match self.monitors {
            Some(monitors) => Some(
                monitors
                    .loaded(self.client, self.gateway_id)
                    .await
                    .map_err(
                        self.failed(format!("reading the health monitors of pool {}", pool.name)),
                    )?,
            ),
            None => None,
        };
        if let Some(known) = &known {
            monitors::complete(known, &mut pool);
        }
        let id = match id {
            Some(id) => self
                .client
                .pools()
                .update(&id, &pool)
                .await
                .map(|()| id)
                .map_err(self.failed(format!("updating pool {}", pool.name)))?,
            None => {
                let id = self
                    .client
                    .pools()
                    .create(&pool)
                    .await
                    .map_err(self.failed(format!("creating pool {}", pool.name)))?;
                ids.pools.insert(pool.name.clone(), id.clone());
                id
            }
        };
        if let Some(known) = &mut known {
            monitors::record_pool(known, &id, &pool);
        }
        Ok(Change::Pool(PoolSummary::of(id, &pool)))
    }

    fn tenant(&self) -> Result<&'a Monitors, LbError> {
        self.monitors.ok_or_else(|| {
            self.failed("writing a health monitor".to_string())(VcdError::Missing {
                what: "tenant health monitors",
                name: "(VCD API 39.0)".to_string(),
                scope: "on this VCD".to_string(),
            })
        })
    }

    /// Fills in the id of an IP set the pool names that this plan created.
    fn complete_pool(&self, mut pool: Pool, ip_sets: &HashMap<String, String>) -> Pool {
        if let Some(reference) = &mut pool.member_group_ref
            && reference.id.is_empty()
            && let Some(id) = reference.name.as_ref().and_then(|name| ip_sets.get(name))
        {
            reference.id.clone_from(id);
        }
        pool
    }

    pub(super) fn failed(&self, action: String) -> impl FnOnce(VcdError) -> LbError {
        LbError::vcd(self.service, action)
    }

    /// Fills in what the plan cannot know: the pool's id and the engine group.
    async fn complete(
        &self,
        mut vs: VirtualService,
        pool_ids: &HashMap<String, String>,
    ) -> Result<VirtualService, LbError> {
        let pool_name = vs.load_balancer_pool_ref.name.clone().unwrap_or_default();
        vs.load_balancer_pool_ref.id = pool_ids.get(&pool_name).cloned().ok_or_else(|| {
            LbError::vcd(self.service, format!("writing virtual service {}", vs.name))(
                VcdError::Missing {
                    what: "pool",
                    name: pool_name.clone(),
                    scope: "on the gateway".to_string(),
                },
            )
        })?;
        // An update keeps the group the virtual service runs on, unless the
        // decision names another (the plan filled in either).
        if vs.service_engine_group_ref.id.is_empty() {
            let wanted = vs.service_engine_group_ref.name.clone();
            vs.service_engine_group_ref = self
                .catalog
                .engine_group(self.client, self.gateway_id, wanted.as_deref())
                .await
                .map_err(self.failed("choosing a service engine group".to_string()))?;
        }
        Ok(vs)
    }
}

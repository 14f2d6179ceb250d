//! Apply: the planned writes, in order, each one request plus its task.
//! Creates and updates do not read the object back (the task names the new
//! id), which keeps a reconcile to a handful of calls; creates whose answer
//! is lost are recognised by name rather than made twice.

use std::collections::HashMap;

use reqwest::Method;
use serde::Serialize;

use super::LbError;
use super::catalog::Catalog;
use super::observe::ServiceObjects;
use super::plan::Op;
use crate::vcd::client::ApiRequest;
use crate::vcd::errors::CallSite;
use crate::vcd::resources::virtual_service::VirtualService;
use crate::vcd::tasks::Task;
use crate::vcd::{VcdClient, VcdError};

const POOLS: &str = "/cloudapi/1.0.0/loadBalancer/pools";
const VIRTUAL_SERVICES: &str = "/cloudapi/1.0.0/loadBalancer/virtualServices";

fn nat_path(gateway_id: &str) -> String {
    format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}/nat/rules")
}

pub struct Applier<'a> {
    pub client: &'a VcdClient,
    pub catalog: &'a Catalog,
    pub gateway_id: &'a str,
    pub service: &'a str,
}

fn encode<T: Serialize>(call: &CallSite, object: &T) -> Result<serde_json::Value, VcdError> {
    serde_json::to_value(object).map_err(|error| VcdError::Unexpected {
        call: call.clone(),
        detail: format!("cannot encode the body: {error}"),
    })
}

impl Applier<'_> {
    /// Runs `ops`; returns how many writes it made.
    pub async fn apply(&self, ops: Vec<Op>, observed: &ServiceObjects) -> Result<usize, LbError> {
        let mut pool_ids: HashMap<String, String> = observed
            .pools
            .iter()
            .map(|(name, pool)| (name.clone(), pool.object.id.clone()))
            .collect();
        let count = ops.len();
        for op in ops {
            self.apply_one(op, &mut pool_ids).await?;
        }
        Ok(count)
    }

    async fn apply_one(
        &self,
        op: Op,
        pool_ids: &mut HashMap<String, String>,
    ) -> Result<(), LbError> {
        let (client, gateway) = (self.client, self.gateway_id);
        match op {
            Op::DeleteNat { id, name } => client
                .delete_nat_rule(gateway, &id)
                .await
                .map_err(self.failed(format!("deleting NAT rule {name}"))),
            Op::DeleteVirtualService { id, name } => client
                .delete_virtual_service(gateway, &id)
                .await
                .map_err(self.failed(format!("deleting virtual service {name}"))),
            Op::DeletePool { id, name } => client
                .delete_pool(gateway, &id)
                .await
                .map_err(self.failed(format!("deleting pool {name}"))),
            Op::UpdatePool(pool) => {
                let path = format!("{POOLS}/{}", pool.id.as_deref().unwrap_or_default());
                self.put("update_pool", &path, &pool)
                    .await
                    .map_err(self.failed(format!("updating pool {}", pool.name)))
            }
            Op::CreatePool(pool) => {
                let action = format!("creating pool {}", pool.name);
                let id = self
                    .create("create_pool", POOLS, &pool, || async {
                        Ok(client.find_pool(gateway, &pool.name).await?.map(|p| p.id))
                    })
                    .await
                    .map_err(self.failed(action))?;
                pool_ids.insert(pool.name.clone(), id);
                Ok(())
            }
            Op::UpdateVirtualService(vs) => {
                let action = format!("updating virtual service {}", vs.name);
                let vs = self.complete(vs, pool_ids).await?;
                let path = format!(
                    "{VIRTUAL_SERVICES}/{}",
                    vs.id.as_deref().unwrap_or_default()
                );
                self.put("update_virtual_service", &path, &vs)
                    .await
                    .map_err(self.failed(action))
            }
            Op::CreateVirtualService(vs) => {
                let action = format!("creating virtual service {}", vs.name);
                let vs = self.complete(vs, pool_ids).await?;
                let created = self
                    .create("create_virtual_service", VIRTUAL_SERVICES, &vs, || async {
                        Ok(client
                            .find_virtual_service(gateway, &vs.name)
                            .await?
                            .map(|v| v.id))
                    })
                    .await;
                if created.is_err() {
                    // The group may be full now; pick again next time.
                    self.catalog.forget_engine_group();
                }
                created.map(|_| ()).map_err(self.failed(action))
            }
            Op::UpdateNat(rule) => {
                let path = format!(
                    "{}/{}",
                    nat_path(gateway),
                    rule.id.as_deref().unwrap_or_default()
                );
                self.put("update_nat_rule", &path, &rule)
                    .await
                    .map_err(self.failed(format!("updating NAT rule {}", rule.name)))
            }
            Op::CreateNat(rule) => {
                let action = format!("creating NAT rule {}", rule.name);
                self.create("create_nat_rule", &nat_path(gateway), &rule, || async {
                    let rules = client.list_nat_rules(gateway).await?;
                    Ok(rules
                        .into_iter()
                        .find(|r| r.name == rule.name)
                        .and_then(|r| r.id))
                })
                .await
                .map(|_| ())
                .map_err(self.failed(action))
            }
        }
    }

    fn failed(&self, action: String) -> impl FnOnce(VcdError) -> LbError {
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
        vs.service_engine_group_ref = self
            .catalog
            .engine_group(self.client, self.gateway_id)
            .await
            .map_err(self.failed("choosing a service engine group".to_string()))?;
        Ok(vs)
    }

    async fn put<T: Serialize>(
        &self,
        operation: &'static str,
        path: &str,
        object: &T,
    ) -> Result<(), VcdError> {
        let body = encode(&self.client.call_of(operation, path), object)?;
        let request = ApiRequest::new(operation, Method::PUT, path).json(body);
        self.client
            .write_on_gateway(self.gateway_id, request)
            .await
            .map(|_| ())
    }

    /// POSTs `object` and returns the new id from the task's owner.
    async fn create<T, F, FF>(
        &self,
        operation: &'static str,
        path: &str,
        object: &T,
        find_existing: F,
    ) -> Result<String, VcdError>
    where
        T: Serialize,
        F: FnMut() -> FF,
        FF: Future<Output = Result<Option<String>, VcdError>>,
    {
        let call = self.client.call_of(operation, path);
        let body = encode(&call, object)?;
        let (body, call) = (&body, &call);
        self.client
            .create_checked(
                operation,
                || async move {
                    let request = ApiRequest::new(operation, Method::POST, path).json(body.clone());
                    let task = self
                        .client
                        .write_on_gateway(self.gateway_id, request)
                        .await?;
                    Task::created_id(task, call, "object")
                },
                find_existing,
            )
            .await
    }
}

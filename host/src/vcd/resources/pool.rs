//! NSX ALB pools: create, get by id or by name (through the gateway's pool
//! summaries, as there is no pool list), update and delete.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::encode;
use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::create::create_checked;
use crate::vcd::delete::DeleteRight;
use crate::vcd::delete::delete_object;
use crate::vcd::errors::VcdError;
use crate::vcd::fiql::Filter;
use crate::vcd::paging::MAX_PAGE_SIZE;
use crate::vcd::paging::list_all;
use crate::vcd::reference::EntityRef;
use crate::vcd::serialize::write_on_gateway;
use crate::vcd::task::Task;
use crate::vcd::version::ApiVersion;

const POOLS: &str = "/cloudapi/1.0.0/loadBalancer/pools";

/// The first API version (VCD 10.4.1) whose pools take their members from
/// an edge firewall group (`memberGroupRef`).
pub const MEMBER_GROUPS_SINCE: ApiVersion = ApiVersion::new(37, 1);

fn enabled() -> bool {
    true
}

/// A member of an NSX ALB pool: one destination server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolMember {
    /// The member's IP address.
    pub ip_address: String,
    /// The member's port; `None` means the port the client connected to.
    pub port: Option<u32>,
    /// The member's weight when a member is chosen, 1–20 (VCD's default 1).
    pub ratio: Option<u32>,
    /// Whether the member receives traffic; true when absent.
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// Every other field, kept so a PUT of the pool sends back what VCD set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A health monitor of a pool: how NSX ALB probes the members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthMonitor {
    /// `HTTP`, `HTTPS`, `TCP`, `UDP` or `PING`.
    #[serde(rename = "type")]
    pub monitor_type: String,
    /// Every other field (`name`, `systemDefined`), kept for PUTs.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// How a pool keeps a client on one member (`EdgeLoadBalancerPersistenceProfile`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersistenceProfile {
    /// `CLIENT_IP`, `HTTP_COOKIE`, `CUSTOM_HTTP_HEADER`, `APP_COOKIE` or `TLS`.
    #[serde(rename = "type")]
    pub profile_type: String,
    /// The cookie (or header) name; required by the cookie and header types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Every other field (`name`, read-only), kept when read.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An NSX ALB pool (`/cloudapi/1.0.0/loadBalancer/pools/{id}`). Read,
/// changed and PUT back whole, so fields this client does not model are
/// kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pool {
    /// The pool's id. `None` until VCD has created the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The pool's name, unique on its gateway.
    pub name: String,
    /// Free text, if set.
    pub description: Option<String>,
    /// Whether the pool is enabled; true when absent.
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// The port traffic is sent to on the members (VCD's default 80).
    pub default_port: Option<u32>,
    /// How a member is chosen for each connection, e.g. `ROUND_ROBIN`; VCD's
    /// default is `LEAST_CONNECTIONS`.
    pub algorithm: Option<String>,
    /// The destination servers; absent counts as none. Left out of a body
    /// when empty: VCD takes either members or a member group.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<PoolMember>,
    /// The IP set standing for the members (API 37.1+), instead of a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_group_ref: Option<EntityRef>,
    /// The monitors that probe the members; absent counts as none.
    #[serde(default)]
    pub health_monitors: Vec<HealthMonitor>,
    /// How a client is kept on one member; absent means none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistence_profile: Option<PersistenceProfile>,
    /// How many minutes a disabled member keeps its open connections (-1
    /// to 7200; 0, VCD's default, closes them at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graceful_timeout_period: Option<i32>,
    /// The edge gateway the pool belongs to.
    pub gateway_ref: EntityRef,
    /// Every other field, kept so a PUT sends back what VCD (or another tool) set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A pool as its gateway's `loadBalancer/poolSummaries` lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolSummary {
    /// The pool's id.
    pub id: String,
    /// The pool's name, unique on its gateway.
    pub name: String,
    /// Free text, if set.
    pub description: Option<String>,
    /// The realization state: `PENDING`, `CONFIGURING`, `REALIZED` or
    /// `REALIZATION_FAILED`.
    pub status: Option<String>,
    /// `UP`, `RUNNING`, `DOWN`, `DISABLED`, `UNAVAILABLE` or `UNKNOWN`.
    pub health_status: Option<String>,
    /// How many members the pool has.
    pub member_count: Option<u32>,
    /// How many of them are enabled.
    pub enabled_member_count: Option<u32>,
    /// How many enabled members VCD finds operational.
    pub up_member_count: Option<u32>,
    /// VCD's localized words on the pool's health.
    pub health_message: Option<String>,
    /// `IP_SET` when the members are a group; absent for a member list.
    pub member_group_type: Option<String>,
}

impl PoolSummary {
    /// The summary VCD would list for `pool` once stored as `id`; the
    /// realization and health states are not known yet.
    pub fn of(id: String, pool: &Pool) -> Self {
        Self {
            id,
            name: pool.name.clone(),
            description: pool.description.clone(),
            status: None,
            health_status: None,
            // A group's size is the set's business, not the pool's.
            member_count: match pool.member_group_ref {
                Some(_) => None,
                None => Some(pool.members.len() as u32),
            },
            member_group_type: pool.member_group_ref.as_ref().map(|_| "IP_SET".into()),
            enabled_member_count: None,
            up_member_count: None,
            health_message: None,
        }
    }
}

/// Load-balancer pools. Made by [`VcdClient::pools`].
#[derive(Clone, Copy)]
pub struct Pools<'c> {
    pub(super) client: &'c VcdClient,
}

impl Pools<'_> {
    /// Creates the pool and returns its id (from the task, without reading
    /// the pool back). A create whose answer was lost is recognised by name
    /// instead of made twice.
    #[tracing::instrument(name = "create_pool", skip(self, pool), fields(pool = %pool.name, gateway = %pool.gateway_ref.id))]
    pub async fn create(&self, pool: &Pool) -> Result<String, VcdError> {
        let gateway_id = pool.gateway_ref.id.as_str();
        let call = self.client.call_of("create_pool", POOLS);
        let body = encode(&call, "pool", &pool.name, pool)?;
        let (body, call) = (&body, &call);
        create_checked(
            self.client,
            "create_pool",
            || async move {
                let request =
                    ApiRequest::new("create_pool", Method::POST, POOLS).encoded(body.clone());
                let task = write_on_gateway(self.client, gateway_id, request).await?;
                Task::created_id(task, call, "pool")
            },
            || async move { Ok(self.find(gateway_id, &pool.name).await?.map(|p| p.id)) },
        )
        .await
    }

    /// The pool with this id.
    #[tracing::instrument(name = "get_pool", skip(self))]
    pub async fn get(&self, pool_id: &str) -> Result<Pool, VcdError> {
        self.client
            .fetch(ApiRequest::get("get_pool", format!("{POOLS}/{pool_id}")))
            .await
    }

    /// Every pool on the gateway, as summaries.
    #[tracing::instrument(name = "pool_summaries", skip(self))]
    pub async fn summaries(&self, gateway_id: &str) -> Result<Vec<PoolSummary>, VcdError> {
        list_all(
            self.client,
            "pool_summaries",
            &format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}/loadBalancer/poolSummaries"),
            None,
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The pool named `name` on the gateway (names are unique per gateway).
    #[tracing::instrument(name = "find_pool", skip(self))]
    pub async fn find(
        &self,
        gateway_id: &str,
        name: &str,
    ) -> Result<Option<PoolSummary>, VcdError> {
        let filter = Filter::eq("name", name);
        let found = list_all(
            self.client,
            "find_pool",
            &format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}/loadBalancer/poolSummaries"),
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await?;
        super::only_one(
            found,
            |p: &PoolSummary| &p.name,
            "pool",
            name,
            "on the gateway",
        )
    }

    /// PUTs the whole pool `pool_id` (fields this client does not model
    /// included); the id is the URL's, whatever the body says.
    #[tracing::instrument(name = "update_pool", skip(self, pool), fields(pool = %pool.name))]
    pub async fn update(&self, pool_id: &str, pool: &Pool) -> Result<(), VcdError> {
        let path = format!("{POOLS}/{pool_id}");
        let body = encode(
            &self.client.call_of("update_pool", &path),
            "pool",
            &pool.name,
            &Pool {
                id: Some(pool_id.to_string()),
                ..pool.clone()
            },
        )?;
        let request = ApiRequest::new("update_pool", Method::PUT, &path).encoded(body);
        write_on_gateway(self.client, &pool.gateway_ref.id, request)
            .await
            .map(|_| ())
    }

    /// Deletes the pool; one that is already gone counts as deleted, one the
    /// role may not delete is [`VcdError::DeleteForbidden`].
    #[tracing::instrument(name = "delete_pool", skip(self))]
    pub async fn delete(&self, gateway_id: &str, pool_id: &str) -> Result<(), VcdError> {
        let request = ApiRequest::new("delete_pool", Method::DELETE, format!("{POOLS}/{pool_id}"));
        delete_object(
            self.client,
            Some(gateway_id),
            request,
            DeleteRight::LoadBalancer,
            || self.get(pool_id),
        )
        .await
    }
}

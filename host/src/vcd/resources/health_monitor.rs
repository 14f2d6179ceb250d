//! Tenant health monitors (API 39.0, VCD 10.6): monitors with their own
//! interval, timeout, thresholds, port and HTTP request, and their
//! assignments to pools. Before 39.0 a pool names VCD's system monitors by
//! type only (`pool::HealthMonitor`).

use reqwest::Method;
use serde::{Deserialize, Serialize};

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

const MONITORS: &str = "/cloudapi/1.0.0/loadBalancer/healthMonitors";
const ASSIGNMENTS: &str = "/cloudapi/1.0.0/loadBalancer/healthMonitors/assignments";

/// The first API version (VCD 10.6) with tenant health monitors.
pub const TENANT_MONITORS_SINCE: ApiVersion = ApiVersion::new(39, 0);

/// The request and healthy answers of an HTTP or HTTPS monitor
/// (`EdgeLoadBalancerHealthMonitorHttpSettings`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpSettings {
    /// The port probed; `None`: the pool's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The request line and headers, e.g. `GET /healthz HTTP/1.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_header: Option<String>,
    /// The status classes of a healthy answer, e.g. `HTTP_2XX`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_response_codes: Vec<String>,
}

/// The port of a TCP or UDP monitor (`…L4CommonSettings`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct L4Settings {
    /// The port probed; `None`: the pool's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

/// A tenant monitor (`EdgeLoadBalancerHealthMonitor`). The fields modelled
/// are the ones written; a read ignores the others (`systemDefined`, and
/// settings such as a request body, which the CCM never sets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantMonitor {
    /// `None` until VCD has created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Unique among the org's monitors.
    pub name: String,
    /// The ownership tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `HTTP`, `HTTPS`, `TCP`, `UDP` or `PING`.
    #[serde(rename = "type")]
    pub monitor_type: String,
    /// Passing checks in a row before a member is up.
    pub successful_checks_count: u32,
    /// Failing checks in a row before a member is down.
    pub failed_checks_count: u32,
    /// Seconds between checks.
    pub send_interval: u32,
    /// Seconds a check waits.
    pub receive_timeout: u32,
    /// The settings of an `HTTP` monitor; VCD takes only the type's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_settings: Option<HttpSettings>,
    /// The settings of an `HTTPS` monitor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https_settings: Option<HttpSettings>,
    /// The settings of a `TCP` monitor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_settings: Option<L4Settings>,
    /// The settings of a `UDP` monitor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_settings: Option<L4Settings>,
}

impl TenantMonitor {
    /// Whether `read` is this monitor as written (its id aside).
    pub fn same_settings(&self, read: &TenantMonitor) -> bool {
        TenantMonitor {
            id: read.id.clone(),
            ..self.clone()
        } == *read
    }

    /// The item naming this monitor in a pool's `healthMonitors`.
    pub fn pool_item(&self, id: &str) -> super::pool::HealthMonitor {
        let mut extra = serde_json::Map::new();
        extra.insert("id".into(), id.into());
        extra.insert("name".into(), self.name.clone().into());
        super::pool::HealthMonitor {
            monitor_type: self.monitor_type.clone(),
            extra,
        }
    }
}

/// A monitor as a gateway's summaries list it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MonitorSummary {
    /// The monitor's id.
    pub id: String,
    /// The monitor's name.
    pub name: String,
    /// Free text; the ownership tag on the CCM's monitors.
    #[serde(default)]
    pub description: Option<String>,
    /// `SYSTEM`, `PROVIDER` or `TENANT`.
    #[serde(default)]
    pub scope: Option<String>,
    /// How many pools use it.
    #[serde(default)]
    pub pool_count: Option<u32>,
}

/// A monitor's link to a pool (`EdgeLoadBalancerHealthMonitorAssignment`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    /// Generated by VCD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The monitor.
    pub health_monitor_ref: EntityRef,
    /// The pool it probes the members of.
    pub load_balancer_pool_ref: EntityRef,
}

/// Tenant health monitors and their pool assignments (API 39.0+). Made by [`VcdClient::health_monitors`].
#[derive(Clone, Copy)]
pub struct HealthMonitors<'c> {
    pub(super) client: &'c VcdClient,
}

impl HealthMonitors<'_> {
    /// Creates the monitor and returns its id (from the task); one whose
    /// answer was lost is recognised by name.
    #[tracing::instrument(name = "create_health_monitor", skip(self, monitor), fields(monitor = %monitor.name))]
    pub async fn create(
        &self,
        gateway_id: &str,
        monitor: &TenantMonitor,
    ) -> Result<String, VcdError> {
        let call = self.client.call_of("create_health_monitor", MONITORS);
        let body = encode(&call, "health monitor", &monitor.name, monitor)?;
        let (body, call) = (&body, &call);
        create_checked(
            self.client,
            "create_health_monitor",
            || async move {
                let request = ApiRequest::new("create_health_monitor", Method::POST, MONITORS)
                    .encoded(body.clone());
                let task = write_on_gateway(self.client, gateway_id, request).await?;
                Task::created_id(task, call, "health monitor")
            },
            || async move {
                let found = self.summaries(gateway_id, Some(&monitor.name)).await?;
                Ok(found.into_iter().next().map(|m| m.id))
            },
        )
        .await
    }

    /// The monitor with this id, as far as it is modelled.
    #[tracing::instrument(name = "get_health_monitor", skip(self))]
    pub async fn get(&self, id: &str) -> Result<TenantMonitor, VcdError> {
        self.client
            .fetch(ApiRequest::get(
                "get_health_monitor",
                format!("{MONITORS}/{id}"),
            ))
            .await
    }

    /// PUTs the whole monitor `id`.
    #[tracing::instrument(name = "update_health_monitor", skip(self, monitor), fields(monitor = %monitor.name))]
    pub async fn update(
        &self,
        gateway_id: &str,
        id: &str,
        monitor: &TenantMonitor,
    ) -> Result<(), VcdError> {
        let path = format!("{MONITORS}/{id}");
        let body = TenantMonitor {
            id: Some(id.to_string()),
            ..monitor.clone()
        };
        let call = self.client.call_of("update_health_monitor", &path);
        let body = encode(&call, "health monitor", &monitor.name, &body)?;
        let request = ApiRequest::new("update_health_monitor", Method::PUT, &path).encoded(body);
        write_on_gateway(self.client, gateway_id, request)
            .await
            .map(|_| ())
    }

    /// Deletes the monitor; gone already counts as deleted. VCD refuses
    /// while a pool still uses it.
    #[tracing::instrument(name = "delete_health_monitor", skip(self))]
    pub async fn delete(&self, gateway_id: &str, id: &str) -> Result<(), VcdError> {
        let request = ApiRequest::new(
            "delete_health_monitor",
            Method::DELETE,
            format!("{MONITORS}/{id}"),
        );
        delete_object(
            self.client,
            Some(gateway_id),
            request,
            DeleteRight::LoadBalancer,
            || self.get(id),
        )
        .await
    }

    /// The monitors the gateway's pools may use (system ones and the
    /// org's), or only the one `named`.
    #[tracing::instrument(name = "health_monitor_summaries", skip(self))]
    pub async fn summaries(
        &self,
        gateway_id: &str,
        named: Option<&str>,
    ) -> Result<Vec<MonitorSummary>, VcdError> {
        let filter = named.map(|name| Filter::eq("name", name));
        list_all(
            self.client,
            "health_monitor_summaries",
            &format!(
                "/cloudapi/1.0.0/edgeGateways/{gateway_id}/loadBalancer/healthMonitorSummaries"
            ),
            filter.as_ref(),
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The pools the monitor is assigned to.
    #[tracing::instrument(name = "monitor_assignments", skip(self))]
    pub async fn assignments(&self, monitor_id: &str) -> Result<Vec<Assignment>, VcdError> {
        let filter = Filter::eq("healthMonitorRef.id", monitor_id);
        list_all(
            self.client,
            "monitor_assignments",
            ASSIGNMENTS,
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// Assigns the monitor to the pool; an assignment whose answer was
    /// lost is looked for before it is sent again.
    #[tracing::instrument(name = "assign_health_monitor", skip(self, assignment), fields(pool = ?assignment.load_balancer_pool_ref.name))]
    pub async fn assign(&self, gateway_id: &str, assignment: &Assignment) -> Result<(), VcdError> {
        let call = self.client.call_of("assign_health_monitor", ASSIGNMENTS);
        let pool = assignment
            .load_balancer_pool_ref
            .name
            .as_deref()
            .unwrap_or_default();
        let body = encode(&call, "monitor assignment", pool, assignment)?;
        let body = &body;
        create_checked(
            self.client,
            "assign_health_monitor",
            || async move {
                let request = ApiRequest::new("assign_health_monitor", Method::POST, ASSIGNMENTS)
                    .encoded(body.clone());
                write_on_gateway(self.client, gateway_id, request)
                    .await
                    .map(|_| ())
            },
            || async move {
                let monitor = &assignment.health_monitor_ref.id;
                let pool = &assignment.load_balancer_pool_ref.id;
                let existing = self.assignments(monitor).await?;
                Ok(existing
                    .iter()
                    .any(|a| a.load_balancer_pool_ref.id == *pool)
                    .then_some(()))
            },
        )
        .await
    }
}

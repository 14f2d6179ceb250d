//! NSX ALB virtual services: create, get by id or by name (through the
//! gateway's summaries), list per gateway, update and delete.

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

const SERVICES: &str = "/cloudapi/1.0.0/loadBalancer/virtualServices";

/// API 38.0 (VCD 10.5) adds `nonCriticalLoggingEnabled`; a body without it
/// would reset it, so bodies from 38.0 on always carry it.
const NON_CRITICAL_LOGGING: ApiVersion = ApiVersion::new(38, 0);

fn enabled() -> bool {
    true
}

fn summaries_path(gateway_id: &str) -> String {
    format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}/loadBalancer/virtualServiceSummaries")
}

/// A port, or range of ports, a virtual service listens on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    /// The first (or only) port.
    pub port_start: u32,
    /// The last port of a range; `None` for a single port.
    pub port_end: Option<u32>,
    /// Whether TLS terminates on this port (HTTPS and L4_TLS profiles only);
    /// VCD's default is false.
    pub ssl_enabled: Option<bool>,
    /// Every other field (such as `tcpUdpProfile`), kept for PUTs.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ServicePort {
    /// The port's transport (`tcpUdpProfile` type, such as `UDP_FAST_PATH`),
    /// when the body or list carries it.
    pub fn transport(&self) -> Option<&str> {
        self.extra
            .get("tcpUdpProfile")
            .and_then(|profile| profile.get("type"))
            .and_then(Value::as_str)
    }
}

/// How NSX ALB handles a virtual service's traffic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationProfile {
    /// The profile's name, e.g. `System-L4-Application`.
    pub name: Option<String>,
    /// `HTTP`, `HTTPS`, `L4` or `L4_TLS`.
    #[serde(rename = "type")]
    pub profile_type: String,
    /// Whether the profile is one of NSX ALB's built-in ones.
    pub system_defined: Option<bool>,
}

/// An NSX ALB virtual service
/// (`/cloudapi/1.0.0/loadBalancer/virtualServices/{id}`). Read, changed and
/// PUT back whole, so fields this client does not model are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualService {
    /// The virtual service's id. `None` until VCD has created the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The virtual service's name, unique on its gateway.
    pub name: String,
    /// Free text, if set.
    pub description: Option<String>,
    /// Whether the virtual service is enabled; true when absent.
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// The IPv4 VIP: an external IP of the gateway, or an internal IP for
    /// internal (one-arm) load balancing.
    pub virtual_ip_address: Option<String>,
    /// The IPv6 VIP (API 37.0+): an external IPv6 address of the gateway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv6_virtual_ip_address: Option<String>,
    /// The pool the traffic goes to.
    pub load_balancer_pool_ref: EntityRef,
    /// The edge gateway the virtual service belongs to.
    pub gateway_ref: EntityRef,
    /// The service engine group that runs it; it must be assigned to the
    /// gateway.
    pub service_engine_group_ref: EntityRef,
    /// The certificate library item TLS terminates with; required for the
    /// HTTPS and L4_TLS profiles.
    pub certificate_ref: Option<EntityRef>,
    /// The ports it listens on; absent counts as none.
    #[serde(default)]
    pub service_ports: Vec<ServicePort>,
    /// How NSX ALB handles the traffic.
    pub application_profile: ApplicationProfile,
    /// Every other field, kept so a PUT sends back what VCD (or another tool) set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A virtual service as its gateway's
/// `loadBalancer/virtualServiceSummaries` lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VirtualServiceSummary {
    /// The virtual service's id.
    pub id: String,
    /// The virtual service's name, unique on its gateway.
    pub name: String,
    /// Free text, if set.
    pub description: Option<String>,
    /// The IPv4 VIP, if set.
    pub virtual_ip_address: Option<String>,
    /// The IPv6 VIP, if set (API 37.0+).
    #[serde(default)]
    pub ipv6_virtual_ip_address: Option<String>,
    /// The realization state: `PENDING`, `CONFIGURING`, `REALIZED` or
    /// `REALIZATION_FAILED`. Answers carry it as a string, or from API 39.0
    /// as an object; read either.
    #[serde(default, deserialize_with = "realization_status")]
    pub status: Option<String>,
    /// `UP`, `DOWN`, `PENDING`, `DISABLED`, …
    pub health_status: Option<String>,
    /// The pool the traffic goes to.
    pub load_balancer_pool_ref: Option<EntityRef>,
    /// The ports it listens on; absent counts as none.
    #[serde(default)]
    pub service_ports: Vec<ServicePort>,
    /// `HTTP`, `HTTPS`, `L4` or `L4_TLS`.
    pub application_profile_type: Option<String>,
    /// The certificate library item TLS terminates with: which uploads are
    /// still in use is read from here.
    pub certificate_ref: Option<EntityRef>,
    /// The service engine group it runs on.
    #[serde(default)]
    pub service_engine_group_ref: Option<EntityRef>,
}

/// A `status` given as a string, or as an object holding the state under a
/// key naming a status or state (`realizationStatus`); anything else reads
/// as unknown rather than failing a list.
fn realization_status<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(state) => Some(state),
        Value::Object(fields) => fields.iter().find_map(|(key, value)| {
            let key = key.to_ascii_lowercase();
            (key.ends_with("status") || key.ends_with("state"))
                .then(|| value.as_str().map(str::to_string))
                .flatten()
        }),
        _ => None,
    })
}

impl VirtualService {
    /// The body to send under `version`: complete for it, so no field the
    /// version defines falls back to its default unasked.
    fn for_version(&self, version: ApiVersion) -> Self {
        let mut body = self.clone();
        if version >= NON_CRITICAL_LOGGING {
            body.extra
                .entry("nonCriticalLoggingEnabled")
                .or_insert(Value::Bool(false));
        }
        body
    }
}

impl VirtualServiceSummary {
    /// The summary VCD would list for `service` once stored as `id`; the
    /// realization and health states are not known yet.
    pub fn of(id: String, service: &VirtualService) -> Self {
        Self {
            id,
            name: service.name.clone(),
            description: service.description.clone(),
            virtual_ip_address: service.virtual_ip_address.clone(),
            ipv6_virtual_ip_address: service.ipv6_virtual_ip_address.clone(),
            status: None,
            health_status: None,
            load_balancer_pool_ref: Some(service.load_balancer_pool_ref.clone()),
            service_ports: service.service_ports.clone(),
            application_profile_type: Some(service.application_profile.profile_type.clone()),
            certificate_ref: service.certificate_ref.clone(),
            service_engine_group_ref: Some(service.service_engine_group_ref.clone()),
        }
    }
}

/// Load-balancer virtual services. Made by [`VcdClient::virtual_services`].
#[derive(Clone, Copy)]
pub struct VirtualServices<'c> {
    pub(super) client: &'c VcdClient,
}

impl VirtualServices<'_> {
    /// Creates the virtual service and returns its id (from the task,
    /// without reading it back); a create whose answer was lost is
    /// recognised by name.
    #[tracing::instrument(name = "create_virtual_service", skip(self, service), fields(service = %service.name, gateway = %service.gateway_ref.id))]
    pub async fn create(&self, service: &VirtualService) -> Result<String, VcdError> {
        let gateway_id = service.gateway_ref.id.as_str();
        let call = self.client.call_of("create_virtual_service", SERVICES);
        let complete = service.for_version(self.client.api_version());
        let body = encode(&call, "virtual service", &service.name, &complete)?;
        let (body, call) = (&body, &call);
        create_checked(
            self.client,
            "create_virtual_service",
            || async move {
                let request = ApiRequest::new("create_virtual_service", Method::POST, SERVICES)
                    .encoded(body.clone());
                let task = write_on_gateway(self.client, gateway_id, request).await?;
                Task::created_id(task, call, "virtual service")
            },
            || async move { Ok(self.find(gateway_id, &service.name).await?.map(|v| v.id)) },
        )
        .await
    }

    /// The virtual service with this id.
    #[tracing::instrument(name = "get_virtual_service", skip(self))]
    pub async fn get(&self, service_id: &str) -> Result<VirtualService, VcdError> {
        self.client
            .fetch(ApiRequest::get(
                "get_virtual_service",
                format!("{SERVICES}/{service_id}"),
            ))
            .await
    }

    /// Every virtual service on the gateway, as summaries.
    #[tracing::instrument(name = "virtual_service_summaries", skip(self))]
    pub async fn summaries(
        &self,
        gateway_id: &str,
    ) -> Result<Vec<VirtualServiceSummary>, VcdError> {
        list_all(
            self.client,
            "virtual_service_summaries",
            &summaries_path(gateway_id),
            None,
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The virtual services of the gateway whose VIP is one of `addresses`
    /// (none asked, none read).
    #[tracing::instrument(name = "virtual_services_at", skip(self))]
    pub async fn at(
        &self,
        gateway_id: &str,
        addresses: &[String],
    ) -> Result<Vec<VirtualServiceSummary>, VcdError> {
        let Some(filter) = addresses
            .iter()
            .map(|ip| match ip.contains(':') {
                true => Filter::eq("ipv6VirtualIpAddress", ip),
                false => Filter::eq("virtualIpAddress", ip),
            })
            .reduce(Filter::or)
        else {
            return Ok(Vec::new());
        };
        list_all(
            self.client,
            "virtual_services_at",
            &summaries_path(gateway_id),
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The virtual service named `name` on the gateway.
    #[tracing::instrument(name = "find_virtual_service", skip(self))]
    pub async fn find(
        &self,
        gateway_id: &str,
        name: &str,
    ) -> Result<Option<VirtualServiceSummary>, VcdError> {
        let filter = Filter::eq("name", name);
        let found = list_all(
            self.client,
            "find_virtual_service",
            &summaries_path(gateway_id),
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await?;
        super::only_one(
            found,
            |s: &VirtualServiceSummary| &s.name,
            "virtual service",
            name,
            "on the gateway",
        )
    }

    /// PUTs the whole virtual service `service_id` (unmodelled fields
    /// included); the id is the URL's, whatever the body says.
    #[tracing::instrument(name = "update_virtual_service", skip(self, service), fields(service = %service.name))]
    pub async fn update(&self, service_id: &str, service: &VirtualService) -> Result<(), VcdError> {
        let path = format!("{SERVICES}/{service_id}");
        let body = encode(
            &self.client.call_of("update_virtual_service", &path),
            "virtual service",
            &service.name,
            &VirtualService {
                id: Some(service_id.to_string()),
                ..service.for_version(self.client.api_version())
            },
        )?;
        let request = ApiRequest::new("update_virtual_service", Method::PUT, &path).encoded(body);
        write_on_gateway(self.client, &service.gateway_ref.id, request)
            .await
            .map(|_| ())
    }

    /// Deletes the virtual service; one already gone counts as deleted, one
    /// the role may not delete is [`VcdError::DeleteForbidden`].
    #[tracing::instrument(name = "delete_virtual_service", skip(self))]
    pub async fn delete(&self, gateway_id: &str, service_id: &str) -> Result<(), VcdError> {
        let request = ApiRequest::new(
            "delete_virtual_service",
            Method::DELETE,
            format!("{SERVICES}/{service_id}"),
        );
        delete_object(
            self.client,
            Some(gateway_id),
            request,
            DeleteRight::LoadBalancer,
            || self.get(service_id),
        )
        .await
    }
}

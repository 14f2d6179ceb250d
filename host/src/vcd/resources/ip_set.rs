//! NSX-T IP sets: firewall groups of type `IP_SET` owned by an edge
//! gateway, which gateway firewall rules name as sources and destinations.

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

const GROUPS: &str = "/cloudapi/1.0.0/firewallGroups";

/// An IP set (`FirewallGroupDetails` with `typeValue: IP_SET`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSet {
    /// The group's id; `None` until VCD has created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Unique per owner.
    pub name: String,
    /// Free text; the CCM's ownership tag on its sets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The edge gateway the set belongs to.
    pub owner_ref: EntityRef,
    /// Always `IP_SET` here.
    pub type_value: String,
    /// Addresses, ranges or CIDRs.
    #[serde(default)]
    pub ip_addresses: Vec<String>,
    /// Every other field, kept so a PUT sends back what VCD set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl IpSet {
    /// A new set of `gateway` holding `addresses`.
    pub fn new(name: &str, description: &str, gateway: &EntityRef, addresses: Vec<String>) -> Self {
        Self {
            id: None,
            name: name.to_string(),
            description: Some(description.to_string()),
            owner_ref: gateway.clone(),
            type_value: "IP_SET".to_string(),
            ip_addresses: addresses,
            extra: Map::new(),
        }
    }

    /// A reference to the set, for a firewall rule.
    pub fn reference(&self) -> EntityRef {
        EntityRef {
            name: Some(self.name.clone()),
            id: self.id.clone().unwrap_or_default(),
        }
    }
}

/// Gateway IP sets (firewall groups of type IP_SET). Made by [`VcdClient::ip_sets`].
#[derive(Clone, Copy)]
pub struct IpSets<'c> {
    pub(super) client: &'c VcdClient,
}

impl IpSets<'_> {
    /// Every IP set of the gateway as its summary lists it: without
    /// addresses.
    #[tracing::instrument(name = "ip_set_summaries", skip(self))]
    pub async fn summaries(&self, gateway_id: &str) -> Result<Vec<IpSet>, VcdError> {
        let filter = Filter::eq("ownerRef.id", gateway_id).and(Filter::eq("typeValue", "IP_SET"));
        list_all(
            self.client,
            "list_ip_sets",
            &format!("{GROUPS}/summaries"),
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The IP sets of the gateway whose name `wanted` accepts (the summaries
    /// are listed once; only the wanted sets are read in full).
    #[tracing::instrument(name = "list_ip_sets", skip(self, wanted))]
    pub async fn list(
        &self,
        gateway_id: &str,
        wanted: impl Fn(&str) -> bool,
    ) -> Result<Vec<IpSet>, VcdError> {
        let summaries = self.summaries(gateway_id).await?;
        // Summaries carry no addresses.
        let mut sets = Vec::with_capacity(summaries.len());
        for summary in summaries.iter().filter(|s| wanted(&s.name)) {
            if let Some(id) = summary.id.as_deref() {
                sets.push(self.get(id).await?);
            }
        }
        Ok(sets)
    }

    /// The IP set with this id.
    #[tracing::instrument(name = "get_ip_set", skip(self))]
    pub async fn get(&self, id: &str) -> Result<IpSet, VcdError> {
        self.client
            .fetch(ApiRequest::get("get_ip_set", format!("{GROUPS}/{id}")))
            .await
    }

    /// Creates the set and returns it with the id the task names, without
    /// reading it back; a create whose answer was lost is found by name.
    #[tracing::instrument(name = "create_ip_set", skip(self, set), fields(set = %set.name))]
    pub async fn create(&self, set: &IpSet) -> Result<IpSet, VcdError> {
        let call = self.client.call_of("create_ip_set", GROUPS);
        let body = encode(&call, "IP set", &set.name, set)?;
        let (body, call, gateway_id) = (&body, &call, set.owner_ref.id.as_str());
        create_checked(
            self.client,
            "create_ip_set",
            || async move {
                let request =
                    ApiRequest::new("create_ip_set", Method::POST, GROUPS).encoded(body.clone());
                let task = write_on_gateway(self.client, gateway_id, request).await?;
                Ok(IpSet {
                    id: Some(Task::created_id(task, call, "IP set")?),
                    ..set.clone()
                })
            },
            || async move {
                let found = self.list(gateway_id, |n| n == set.name).await?;
                Ok(found.into_iter().find(|s| s.name == set.name))
            },
        )
        .await
    }

    /// PUTs the whole set; once the task succeeds VCD holds what was sent.
    #[tracing::instrument(name = "update_ip_set", skip(self, set), fields(set = %set.name))]
    pub async fn update(&self, set: &IpSet) -> Result<(), VcdError> {
        let id = set.id.as_deref().ok_or_else(|| VcdError::Missing {
            what: "IP set id",
            name: set.name.clone(),
            scope: "(update a set read from VCD)".to_string(),
        })?;
        let path = format!("{GROUPS}/{id}");
        let call = self.client.call_of("update_ip_set", &path);
        let body = encode(&call, "IP set", &set.name, set)?;
        let request = ApiRequest::new("update_ip_set", Method::PUT, &path).encoded(body);
        write_on_gateway(self.client, &set.owner_ref.id, request)
            .await
            .map(drop)
    }

    /// Deletes the set; one already gone counts as deleted.
    #[tracing::instrument(name = "delete_ip_set", skip(self))]
    pub async fn delete(&self, gateway_id: &str, id: &str) -> Result<(), VcdError> {
        let request = ApiRequest::new("delete_ip_set", Method::DELETE, format!("{GROUPS}/{id}"));
        delete_object(
            self.client,
            Some(gateway_id),
            request,
            DeleteRight::Firewall,
            || self.get(id),
        )
        .await
    }
}

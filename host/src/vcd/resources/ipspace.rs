//! IP Spaces (VCD 10.4.1+): which spaces a gateway reaches, floating-IP
//! allocation, claiming an allocation for a Service (`USED_MANUAL` with a
//! description that names it) and releasing it.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::delete::DeleteRight;
use crate::vcd::delete::delete_object;
use crate::vcd::errors::VcdError;
use crate::vcd::fiql::Filter;
use crate::vcd::paging::MAX_PAGE_SIZE;
use crate::vcd::paging::list_all;
use crate::vcd::reference::EntityRef;
use crate::vcd::tasks::write;

const SPACES: &str = "/cloudapi/1.0.0/ipSpaces";

/// The org's unused floating IPs in one IP Space the gateway reaches.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FloatingIpSuggestion {
    /// The IP Space.
    pub ip_space_ref: EntityRef,
    /// IPs allocated to the org and not yet used.
    #[serde(default)]
    pub unused_values: Vec<String>,
}

/// An IP Space as `ipSpaces/summaries` lists it, without ranges.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSpaceSummary {
    /// The space's URN, `urn:vcloud:ipSpace:<uuid>`.
    pub id: String,
    /// The space's name.
    pub name: String,
    /// `PUBLIC`, `PRIVATE` or `SHARED_SERVICES`.
    #[serde(rename = "type")]
    pub space_type: String,
}

/// An inclusive range of addresses of an IP Space.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSpaceRange {
    /// The first address of the range.
    pub start_ip_address: String,
    /// The last address of the range, included.
    pub end_ip_address: String,
}

/// The address ranges of an IP Space (`ipSpaceRanges`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSpaceRanges {
    /// The ranges; absent counts as none.
    #[serde(default)]
    pub ip_ranges: Vec<IpSpaceRange>,
}

/// An IP Space (`/cloudapi/1.0.0/ipSpaces/{id}`), with the fields the CCM
/// reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpSpace {
    /// The space's URN, `urn:vcloud:ipSpace:<uuid>`.
    pub id: String,
    /// The space's name.
    pub name: String,
    /// `PUBLIC`, `PRIVATE` or `SHARED_SERVICES`.
    #[serde(rename = "type")]
    pub space_type: String,
    /// The space's address ranges, if VCD includes them.
    pub ip_space_ranges: Option<IpSpaceRanges>,
    /// How much of the space is allocated, if VCD says.
    pub utilization: Option<IpSpaceUtilization>,
}

/// An IP Space's `utilization`.
#[derive(Debug, Clone, Deserialize)]
pub struct IpSpaceUtilization {
    /// The floating IPs' counts.
    #[serde(rename = "floatingIPs")]
    pub floating_ips: Option<FloatingIpCounts>,
}

/// How many floating IPs a space has and has handed out; VCD sends the
/// counts as strings (they may pass 2^64 in IPv6 spaces).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FloatingIpCounts {
    /// Addresses in the space's ranges.
    pub total_count: Option<String>,
    /// Addresses allocated to any org.
    pub allocated_count: Option<String>,
}

impl FloatingIpCounts {
    /// Addresses no org holds yet, when both counts are numbers.
    pub fn unallocated(&self) -> Option<u128> {
        let count = |text: &Option<String>| text.as_deref()?.trim().parse::<u128>().ok();
        Some(count(&self.total_count)?.saturating_sub(count(&self.allocated_count)?))
    }
}

/// One allocation; PUT back whole, so unknown fields are kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpAllocation {
    /// The allocation's id, as its `allocations/{id}` path names it.
    pub id: String,
    /// The allocated IP address.
    pub value: String,
    /// `UNUSED`, `USED` (a NAT rule or VS uses it) or `USED_MANUAL` (claimed).
    pub usage_state: Option<String>,
    /// Free text, meaningful only with `USED_MANUAL`: the CCM's claims name
    /// their Service here.
    pub description: Option<String>,
    /// Every other field, kept so a PUT sends back what VCD (or another tool) set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What the allocate task reports for each IP.
#[derive(Debug, Clone, Deserialize)]
pub struct AllocatedIp {
    /// The new allocation's id.
    pub id: String,
    /// The allocated IP address.
    pub value: String,
}

/// IP Spaces and the org's floating-IP allocations. Made by [`VcdClient::ip_spaces`].
#[derive(Clone, Copy)]
pub struct IpSpaces<'c> {
    pub(super) client: &'c VcdClient,
}

impl IpSpaces<'_> {
    /// One entry per IP Space the gateway reaches.
    #[tracing::instrument(skip(self))]
    pub async fn floating_ip_suggestions(
        &self,
        gateway_id: &str,
    ) -> Result<Vec<FloatingIpSuggestion>, VcdError> {
        let filter = Filter::eq("gatewayId", gateway_id);
        list_all(
            self.client,
            "floating_ip_suggestions",
            &format!("{SPACES}/floatingIpSuggestions"),
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// Every IP Space the session can see, as summaries.
    #[tracing::instrument(name = "ip_space_summaries", skip(self))]
    pub async fn summaries(&self) -> Result<Vec<IpSpaceSummary>, VcdError> {
        list_all(
            self.client,
            "ip_space_summaries",
            &format!("{SPACES}/summaries"),
            None,
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The IP Space with this URN, ranges included.
    #[tracing::instrument(name = "get_ip_space", skip(self))]
    pub async fn get(&self, space_id: &str) -> Result<IpSpace, VcdError> {
        self.client
            .fetch(ApiRequest::get(
                "get_ip_space",
                format!("{SPACES}/{space_id}"),
            ))
            .await
    }

    /// Allocates one floating IP to the org: any free one, or `value`.
    /// Not retried after an ambiguous failure: a second allocation would
    /// hold a second IP; the caller finds strays by their description.
    #[tracing::instrument(skip(self))]
    pub async fn allocate_floating_ip(
        &self,
        space_id: &str,
        value: Option<&str>,
    ) -> Result<AllocatedIp, VcdError> {
        let body = match value {
            Some(ip) => json!({"type": "FLOATING_IP", "value": ip}),
            None => json!({"type": "FLOATING_IP", "quantity": 1}),
        };
        let path = format!("{SPACES}/{space_id}/allocate");
        let request = ApiRequest::new("allocate_floating_ip", Method::POST, &path).json(body);
        let call = self.client.call_of("allocate_floating_ip", &path);
        let task = write(self.client, request).await?;
        let content = task
            .and_then(|t| t.result)
            .and_then(|r| r.result_content)
            .ok_or_else(|| VcdError::Unexpected {
                call: call.clone(),
                detail: "the allocate task reports no result".to_string(),
            })?;
        let allocated: Vec<AllocatedIp> =
            serde_json::from_str(&content).map_err(|error| VcdError::Unexpected {
                call: call.clone(),
                detail: format!("the allocate result is not a list of IPs: {error}"),
            })?;
        allocated.into_iter().next().ok_or(VcdError::Unexpected {
            call,
            detail: "the allocate task allocated nothing".to_string(),
        })
    }

    /// The space's allocations that match `filter` (all of them for `None`),
    /// all pages.
    pub async fn allocations(
        &self,
        space_id: &str,
        filter: Option<&Filter>,
    ) -> Result<Vec<IpAllocation>, VcdError> {
        list_all(
            self.client,
            "ip_allocations",
            &format!("{SPACES}/{space_id}/allocations"),
            filter,
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The floating-IP allocation of `ip` in the space, if there is one.
    #[tracing::instrument(name = "find_allocation_by_value", skip(self))]
    pub async fn find_allocation(
        &self,
        space_id: &str,
        ip: &str,
    ) -> Result<Option<IpAllocation>, VcdError> {
        let filter = Filter::eq("type", "FLOATING_IP").and(Filter::eq("value", ip));
        let found = self.allocations(space_id, Some(&filter)).await?;
        super::only_one(found, |a| &a.value, "IP allocation", ip, "in the IP Space")
    }

    /// The floating IPs of the space claimed by a client (`USED_MANUAL`);
    /// their descriptions say by whom.
    #[tracing::instrument(skip(self))]
    pub async fn claimed_allocations(&self, space_id: &str) -> Result<Vec<IpAllocation>, VcdError> {
        let filter = Filter::eq("usageState", "USED_MANUAL").and(Filter::eq("type", "FLOATING_IP"));
        self.allocations(space_id, Some(&filter)).await
    }

    async fn put_allocation(
        &self,
        operation: &'static str,
        space_id: &str,
        allocation: &IpAllocation,
    ) -> Result<IpAllocation, VcdError> {
        let path = format!("{SPACES}/{space_id}/allocations/{}", allocation.id);
        let body = serde_json::to_value(allocation).map_err(|error| VcdError::Unexpected {
            call: self.client.call_of(operation, &path),
            detail: format!("cannot encode the allocation: {error}"),
        })?;
        write(
            self.client,
            ApiRequest::new(operation, Method::PUT, &path).json(body),
        )
        .await?;
        self.client
            .fetch(ApiRequest::get("get_ip_allocation", path))
            .await
    }

    /// Marks the allocation as held by whoever `description` names.
    #[tracing::instrument(skip(self, allocation), fields(ip = %allocation.value))]
    pub async fn claim_allocation(
        &self,
        space_id: &str,
        allocation: &IpAllocation,
        description: &str,
    ) -> Result<IpAllocation, VcdError> {
        let mut claimed = allocation.clone();
        claimed.usage_state = Some("USED_MANUAL".to_string());
        claimed.description = Some(description.to_string());
        self.put_allocation("claim_ip_allocation", space_id, &claimed)
            .await
    }

    /// Returns the IP to the space. The allocation is deleted as it is, still
    /// claimed (VCD deletes `USED_MANUAL` allocations): unclaiming it first,
    /// as the upstream CCM did, leaves an unmarked allocation no one finds
    /// again if the process stops between the two calls.
    #[tracing::instrument(skip(self, allocation), fields(ip = %allocation.value))]
    pub async fn release_allocation(
        &self,
        space_id: &str,
        allocation: &IpAllocation,
    ) -> Result<(), VcdError> {
        let path = format!("{SPACES}/{space_id}/allocations/{}", allocation.id);
        let request = ApiRequest::new("release_ip_allocation", Method::DELETE, path);
        delete_object(
            self.client,
            None,
            request,
            DeleteRight::IpSpaces,
            || async {
                match self.find_allocation(space_id, &allocation.value).await? {
                    Some(found) if found.id == allocation.id => Ok(()),
                    _ => Err(VcdError::Missing {
                        what: "IP allocation",
                        name: allocation.value.clone(),
                        scope: format!("in IP Space {space_id}"),
                    }),
                }
            },
        )
        .await
    }
}

//! Service engine group assignments of a gateway, and the choice of one
//! with room for another virtual service.

use serde::Deserialize;

use crate::vcd::client::VcdClient;
use crate::vcd::errors::VcdError;
use crate::vcd::fiql::Filter;
use crate::vcd::paging::MAX_PAGE_SIZE;
use crate::vcd::paging::list_all;
use crate::vcd::reference::EntityRef;

/// An NSX ALB service engine group assigned to an edge gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SegAssignment {
    /// The assignment's id.
    pub id: String,
    /// Unset for DEDICATED groups, which then never count as having room.
    pub max_virtual_services: Option<u32>,
    /// How many virtual services the group already runs for the gateway.
    pub num_deployed_virtual_services: Option<u32>,
    /// The service engine group.
    pub service_engine_group_ref: EntityRef,
}

impl SegAssignment {
    /// How many more virtual services fit: `max_virtual_services` less those
    /// deployed; 0 without a stated maximum.
    pub fn free(&self) -> u32 {
        let deployed = self.num_deployed_virtual_services.unwrap_or(0);
        self.max_virtual_services
            .map_or(0, |max| max.saturating_sub(deployed))
    }

    /// Whether another virtual service fits.
    pub fn has_capacity(&self) -> bool {
        self.free() > 0
    }

    /// The group's name (its id when VCD gives none).
    pub fn name(&self) -> &str {
        let group = &self.service_engine_group_ref;
        group.name.as_deref().unwrap_or(&group.id)
    }
}

/// The group named `wanted`, else the first with room.
pub fn choose(
    assignments: &[SegAssignment],
    gateway_id: &str,
    wanted: Option<&str>,
) -> Result<EntityRef, VcdError> {
    let found = match wanted {
        Some(name) => assignments.iter().find(|a| a.name() == name),
        None => assignments.iter().find(|a| a.has_capacity()),
    };
    found
        .map(|a| a.service_engine_group_ref.clone())
        .ok_or_else(|| match wanted {
            Some(name) => VcdError::Missing {
                what: "service engine group",
                name: name.to_string(),
                scope: format!("among the groups assigned to gateway {gateway_id}"),
            },
            None => VcdError::Missing {
                what: "service engine group with room for a virtual service",
                name: gateway_id.to_string(),
                scope: "among the groups assigned to the gateway (ask the provider to assign one or raise maxVirtualServices)".to_string(),
            },
        })
}

/// Service engine groups assigned to gateways. Made by [`VcdClient::service_engine_groups`].
#[derive(Clone, Copy)]
pub struct ServiceEngineGroups<'c> {
    pub(super) client: &'c VcdClient,
}

impl ServiceEngineGroups<'_> {
    /// The service engine groups assigned to the gateway, all pages.
    #[tracing::instrument(name = "seg_assignments", skip(self))]
    pub async fn assignments(&self, gateway_id: &str) -> Result<Vec<SegAssignment>, VcdError> {
        let filter = Filter::eq("gatewayRef.id", gateway_id);
        list_all(
            self.client,
            "seg_assignments",
            "/cloudapi/1.0.0/loadBalancer/serviceEngineGroups/assignments",
            Some(&filter),
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The first service engine group on the gateway with room left.
    #[tracing::instrument(name = "pick_service_engine_group", skip(self))]
    pub async fn pick(&self, gateway_id: &str) -> Result<EntityRef, VcdError> {
        choose(&self.assignments(gateway_id).await?, gateway_id, None)
    }
}

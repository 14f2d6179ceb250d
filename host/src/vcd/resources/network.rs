//! Org and VDC lookups (cached) and the cluster's placement: the org VDC
//! network named in the config and the edge gateway it is routed through.
//! Resolving all of it costs four calls, then two (org and VDC are cached).

use reqwest::Method;
use serde::Deserialize;

use super::gateway::EdgeGateway;
use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::errors::VcdError;
use crate::vcd::fiql::Filter;
use crate::vcd::paging::list_all;
use crate::vcd::reference::EntityRef;

const CLOUDAPI: &str = "/cloudapi/1.0.0";

#[derive(Debug, Clone, Deserialize)]
struct Named {
    id: String,
    name: String,
}

/// A data-center group (`/cloudapi/1.0.0/vdcGroups`): VDCs of one org
/// sharing networks and an edge gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VdcGroup {
    id: String,
    name: String,
    #[serde(default)]
    participating_org_vdcs: Vec<GroupMember>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct GroupMember {
    vdc_ref: EntityRef,
}

impl VdcGroup {
    fn member_names(&self) -> Vec<String> {
        self.participating_org_vdcs
            .iter()
            .map(|m| {
                m.vdc_ref
                    .name
                    .clone()
                    .unwrap_or_else(|| m.vdc_ref.id.clone())
            })
            .collect()
    }
}

/// How an org VDC network is connected to an edge gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkConnection {
    /// The edge gateway the network is routed through; `None` for an
    /// isolated network.
    pub router_ref: Option<EntityRef>,
}

/// An org VDC network (`/cloudapi/1.0.0/orgVdcNetworks`), with the fields
/// the CCM reads.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrgVdcNetwork {
    /// The network's URN, `urn:vcloud:network:<uuid>`.
    pub id: String,
    /// The network's name.
    pub name: String,
    /// What backs the network, e.g. `NSXT_FLEXIBLE_SEGMENT` or
    /// `DV_PORTGROUP`.
    pub backing_network_type: Option<String>,
    /// The network's connection to an edge gateway, if any.
    pub connection: Option<NetworkConnection>,
}

impl OrgVdcNetwork {
    /// NSX-T segments are the only networks NSX ALB load balancers serve.
    pub fn is_nsxt(&self) -> bool {
        matches!(
            self.backing_network_type.as_deref(),
            Some("NSXT_FIXED_SEGMENT" | "NSXT_FLEXIBLE_SEGMENT")
        )
    }

    /// The edge gateway the network is routed through, if any.
    pub fn gateway(&self) -> Option<&EntityRef> {
        self.connection.as_ref()?.router_ref.as_ref()
    }
}

/// Where the cluster lives, resolved once at start.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The configured org.
    pub org: EntityRef,
    /// The configured VDC.
    pub vdc: EntityRef,
    /// The configured org VDC network.
    pub network: OrgVdcNetwork,
    /// The edge gateway the network is routed through, as read when the
    /// placement was resolved.
    pub gateway: EdgeGateway,
}

/// Orgs, VDCs, data-center groups and org VDC networks: where the cluster lives. Made by [`VcdClient::tenancy`].
#[derive(Clone, Copy)]
pub struct Tenancy<'c> {
    pub(super) client: &'c VcdClient,
}

impl Tenancy<'_> {
    /// The org named `name` (cached). For the configured org this also
    /// scopes System-org sessions to it.
    #[tracing::instrument(skip(self))]
    pub async fn org(&self, name: &str) -> Result<EntityRef, VcdError> {
        if let Some(org) = self.client.cache().org(name) {
            return Ok(org);
        }
        let request = ApiRequest::get("find_org", format!("{CLOUDAPI}/orgs"))
            .query("filter", Filter::eq("name", name));
        let page: super::Values<Named> = self.client.fetch(request).await?;
        let org = super::only_one(page.values, |o| &o.name, "org", name, "in VCD")?
            .map(|o| EntityRef::new(o.name, o.id))
            .ok_or_else(|| VcdError::Missing {
                what: "org",
                name: name.to_string(),
                scope: "among the orgs this user can see".to_string(),
            })?;
        if name == self.client.config().org {
            self.client.set_tenant_context(&org.id);
        }
        self.client.cache().put_org(name, org.clone());
        Ok(org)
    }

    /// A VDC of `org` by name or URN (cached).
    #[tracing::instrument(skip(self))]
    pub async fn vdc(&self, org: &EntityRef, name_or_id: &str) -> Result<EntityRef, VcdError> {
        if let Some(vdc) = self.client.cache().vdc(&org.id, name_or_id) {
            return Ok(vdc);
        }
        #[derive(Deserialize)]
        struct Vdc {
            id: String,
            name: String,
            org: Option<EntityRef>,
        }
        let vdcs: Vec<Vdc> = if name_or_id.starts_with("urn:vcloud:vdc:") {
            let request = ApiRequest::get("get_vdc", format!("{CLOUDAPI}/vdcs/{name_or_id}"));
            vec![self.client.fetch(request).await?]
        } else {
            let request = ApiRequest::get("find_vdc", format!("{CLOUDAPI}/vdcs"))
                .query("filter", Filter::eq("name", name_or_id));
            self.client
                .fetch::<super::Values<Vdc>>(request)
                .await?
                .values
        };
        let scope = format!("in org {}", org.name.as_deref().unwrap_or(&org.id));
        let in_org: Vec<Vdc> = vdcs
            .into_iter()
            .filter(|v| v.org.as_ref().is_none_or(|o| o.id == org.id))
            .filter(|v| v.id == name_or_id || v.name == name_or_id)
            .collect();
        if in_org.len() > 1 {
            return Err(VcdError::Ambiguous {
                what: "VDC",
                name: name_or_id.to_string(),
                scope,
                count: in_org.len(),
            });
        }
        let Some(vdc) = in_org.into_iter().next() else {
            return Err(match self.vdc_group(name_or_id).await {
                Some(group) => VcdError::GroupNotVdc {
                    name: name_or_id.to_string(),
                    members: group.member_names(),
                },
                None => VcdError::Missing {
                    what: "VDC",
                    name: name_or_id.to_string(),
                    scope,
                },
            });
        };
        let vdc = EntityRef::new(vdc.name, vdc.id);
        self.client
            .cache()
            .put_vdc(&org.id, name_or_id, vdc.clone());
        Ok(vdc)
    }

    /// The data-center group named (or with the URN) `name_or_id`, if the
    /// user can see one: only asked when no VDC has that name, to say what
    /// to write instead. A failed lookup is logged and counts as none.
    async fn vdc_group(&self, name_or_id: &str) -> Option<VdcGroup> {
        let found = if name_or_id.starts_with("urn:vcloud:vdcGroup:") {
            let request = ApiRequest::get(
                "get_vdc_group",
                format!("{CLOUDAPI}/vdcGroups/{name_or_id}"),
            );
            self.client.fetch(request).await.map(|group| vec![group])
        } else {
            let request = ApiRequest::get("find_vdc_group", format!("{CLOUDAPI}/vdcGroups"))
                .query("filter", Filter::eq("name", name_or_id));
            self.client
                .fetch::<super::Values<VdcGroup>>(request)
                .await
                .map(|page| page.values)
        };
        match found {
            Ok(groups) => groups
                .into_iter()
                .find(|g| g.id == name_or_id || g.name == name_or_id),
            Err(error) => {
                tracing::debug!(%error, name_or_id, "no data-center group lookup");
                None
            }
        }
    }

    /// The org VDC network `name` usable from `vdc`: one of the VDC, or one
    /// of a data-center group the VDC belongs to (`_context` selects both;
    /// a group's network has no `orgVdc`). More than one match is an error.
    #[tracing::instrument(name = "find_network", skip(self))]
    pub async fn network(&self, vdc: &EntityRef, name: &str) -> Result<OrgVdcNetwork, VcdError> {
        let filter = Filter::eq("_context", &vdc.id).and(Filter::eq("name", name));
        let networks: Vec<OrgVdcNetwork> = list_all(
            self.client,
            "find_network",
            &format!("{CLOUDAPI}/orgVdcNetworks"),
            Some(&filter),
            32,
        )
        .await?;
        let scope = format!("for VDC {}", vdc.name.as_deref().unwrap_or(&vdc.id));
        super::only_one(networks, |n| &n.name, "org VDC network", name, &scope)?.ok_or(
            VcdError::Missing {
                what: "org VDC network",
                name: name.to_string(),
                scope,
            },
        )
    }

    /// Org, VDC (both cached), network and its edge gateway (read each
    /// time) of the configured org.
    #[tracing::instrument(name = "resolve_placement", skip(self))]
    pub async fn placement(&self, vdc: &str, network: &str) -> Result<Placement, VcdError> {
        let org = self.org(&self.client.config().org.clone()).await?;
        let vdc_ref = self.vdc(&org, vdc).await?;
        let network_object = self.network(&vdc_ref, network).await?;
        let gateway_ref = network_object
            .gateway()
            .cloned()
            .ok_or_else(|| VcdError::Missing {
                what: "edge gateway",
                name: network.to_string(),
                scope: "(the network is not routed through an edge gateway)".to_string(),
            })?;
        let gateway = self.client.gateways().get(&gateway_ref.id).await?;
        let placement = Placement {
            org,
            vdc: vdc_ref,
            network: network_object,
            gateway,
        };
        Ok(placement)
    }

    /// The live org record; used to check a token still works.
    pub async fn current_org(&self) -> Result<EntityRef, VcdError> {
        let org = self.org(&self.client.config().org.clone()).await?;
        let request = ApiRequest::new(
            "get_org",
            Method::GET,
            format!("{CLOUDAPI}/orgs/{}", org.id),
        );
        let named: Named = self.client.fetch(request).await?;
        Ok(EntityRef::new(named.name, named.id))
    }
}

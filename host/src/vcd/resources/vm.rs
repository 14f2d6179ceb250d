//! VM inventory through the legacy API (JSON form): the query service for
//! many VMs at once (by vApp or the whole org, paged), a VM by id with its
//! power state and NICs, and the vApp a VM belongs to.

use serde::Deserialize;

use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::errors::VcdError;
use crate::vcd::fiql::Filter;
use crate::vcd::paging::MAX_PAGE_SIZE;

/// Which VMs a query returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VmScope {
    /// The VMs of the vApp with this name.
    VApp(String),
    /// Every VM the session can see.
    Org,
}

/// One row of the VM query.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmRecord {
    pub name: String,
    pub href: String,
    /// The vApp's name.
    pub container_name: Option<String>,
    pub vdc_name: Option<String>,
    /// E.g. `POWERED_ON`.
    pub status: Option<String>,
    pub ip_address: Option<String>,
}

impl VmRecord {
    /// `urn:vcloud:vm:<uuid>` from the record's href.
    pub fn id(&self) -> Option<String> {
        let uuid = self.href.rsplit_once("/vm-")?.1;
        Some(format!("urn:vcloud:vm:{uuid}"))
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct QueryPage {
    #[serde(default)]
    total: usize,
    #[serde(default)]
    record: Vec<VmRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerState {
    PoweredOn,
    PoweredOff,
    Suspended,
    /// Any other of VCD's numeric states (creating, failed, …).
    Other(i32),
}

impl PowerState {
    fn from_code(code: i32) -> Self {
        match code {
            4 => Self::PoweredOn,
            8 => Self::PoweredOff,
            3 => Self::Suspended,
            other => Self::Other(other),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nic {
    pub index: u32,
    pub network: Option<String>,
    pub ip_address: Option<String>,
    pub mac_address: Option<String>,
    pub connected: bool,
}

#[derive(Debug, Clone)]
pub struct Vm {
    pub id: String,
    pub name: String,
    pub power: PowerState,
    pub nics: Vec<Nic>,
    pub primary_nic_index: Option<u32>,
    /// The legacy href of the VM's vApp.
    pub vapp_href: Option<String>,
}

impl Vm {
    pub fn primary_nic(&self) -> Option<&Nic> {
        let index = self.primary_nic_index?;
        self.nics.iter().find(|n| n.index == index)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VApp {
    pub id: String,
    pub name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Link {
    rel: String,
    #[serde(rename = "type")]
    media_type: Option<String>,
    href: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NetworkConnection {
    network_connection_index: u32,
    network: Option<String>,
    ip_address: Option<String>,
    mac_address: Option<String>,
    #[serde(default)]
    is_connected: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Section {
    #[serde(rename = "_type")]
    section_type: Option<String>,
    primary_network_connection_index: Option<u32>,
    #[serde(default)]
    network_connection: Vec<NetworkConnection>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VmBody {
    id: String,
    name: String,
    status: i32,
    #[serde(default)]
    link: Vec<Link>,
    #[serde(default)]
    section: Vec<Section>,
}

impl From<VmBody> for Vm {
    fn from(body: VmBody) -> Self {
        let network = body
            .section
            .into_iter()
            .find(|s| s.section_type.as_deref() == Some("NetworkConnectionSectionType"));
        let vapp_href = body
            .link
            .into_iter()
            .find(|l| l.rel == "up" && l.media_type.as_deref().is_some_and(|t| t.contains("vApp")))
            .map(|l| l.href);
        let (primary_nic_index, nics) = match network {
            Some(section) => (
                section.primary_network_connection_index,
                section
                    .network_connection
                    .into_iter()
                    .map(|c| Nic {
                        index: c.network_connection_index,
                        network: c.network,
                        ip_address: c.ip_address,
                        mac_address: c.mac_address,
                        connected: c.is_connected,
                    })
                    .collect(),
            ),
            None => (None, Vec::new()),
        };
        Self {
            id: body.id,
            name: body.name,
            power: PowerState::from_code(body.status),
            nics,
            primary_nic_index,
            vapp_href,
        }
    }
}

/// The bare UUID of a VM or vApp URN (`urn:vcloud:vm:<uuid>`).
fn uuid_of(urn: &str) -> &str {
    urn.rsplit(':').next().unwrap_or(urn)
}

fn path_of(href: &str) -> String {
    reqwest::Url::parse(href).map_or_else(|_| href.to_string(), |url| url.path().to_string())
}

impl VcdClient {
    /// The VMs in `scope`, every page. Provider sessions query `adminVM`.
    #[tracing::instrument(skip(self))]
    pub async fn query_vms(&self, scope: &VmScope) -> Result<Vec<VmRecord>, VcdError> {
        let query_type = if self.is_provider() { "adminVM" } else { "vm" };
        let mut filter = Filter::eq("isVAppTemplate", "false");
        if let VmScope::VApp(name) = scope {
            filter = filter.and(Filter::eq("containerName", name));
        }
        let mut records = Vec::new();
        for page in 1.. {
            let request = ApiRequest::get("query_vms", "/api/query")
                .legacy()
                .query("type", query_type)
                .query("format", "records")
                .query("page", page)
                .query("pageSize", MAX_PAGE_SIZE)
                .query("filter", &filter);
            let reply: QueryPage = self.fetch(request).await?;
            let empty = reply.record.is_empty();
            records.extend(reply.record);
            if empty || records.len() >= reply.total {
                break;
            }
        }
        Ok(records)
    }

    /// A VM by URN (or bare UUID). VCD answers 403 for a VM that is gone.
    #[tracing::instrument(skip(self))]
    pub async fn get_vm(&self, vm_id: &str) -> Result<Vm, VcdError> {
        let request =
            ApiRequest::get("get_vm", format!("/api/vApp/vm-{}", uuid_of(vm_id))).legacy();
        self.fetch::<VmBody>(request).await.map(Vm::from)
    }

    /// The vApp `vm` belongs to.
    #[tracing::instrument(skip(self, vm), fields(vm = %vm.name))]
    pub async fn vm_vapp(&self, vm: &Vm) -> Result<VApp, VcdError> {
        let href = vm.vapp_href.as_deref().ok_or_else(|| VcdError::Missing {
            what: "vApp link",
            name: vm.name.clone(),
            scope: "on the VM".to_string(),
        })?;
        #[derive(Deserialize)]
        struct VAppBody {
            id: String,
            name: String,
        }
        let body: VAppBody = self
            .fetch(ApiRequest::get("get_vapp", path_of(href)).legacy())
            .await?;
        Ok(VApp {
            id: body.id,
            name: body.name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_ids_come_from_hrefs() {
        let record = VmRecord {
            name: "w".into(),
            href: "https://h/api/vApp/vm-1234".into(),
            container_name: None,
            vdc_name: None,
            status: None,
            ip_address: None,
        };
        assert_eq!(record.id().as_deref(), Some("urn:vcloud:vm:1234"));
        assert_eq!(uuid_of("urn:vcloud:vm:abcd"), "abcd");
        assert_eq!(PowerState::from_code(4), PowerState::PoweredOn);
    }
}

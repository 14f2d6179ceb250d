//! VM inventory through the legacy API (JSON form): the query service for
//! many VMs at once (by vApp, vApp name prefix or the whole org, paged), a VM
//! by id with its power state, NICs, sizing and computer name, the vApp a VM
//! belongs to, and a vApp with every VM in it.

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
    /// The VMs of every vApp whose name starts with this (VCD's `*`
    /// wildcard, which is case-insensitive: callers compare exactly).
    VAppPrefix(String),
    /// Every VM the session can see.
    Org,
}

/// One row of the VM query.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VmRecord {
    /// The VM's name.
    pub name: String,
    /// The VM's legacy href, `…/api/vApp/vm-<uuid>`.
    pub href: String,
    /// The vApp's name.
    pub container_name: Option<String>,
    /// The vApp's legacy href.
    pub container: Option<String>,
    /// The VDC's legacy href.
    pub vdc: Option<String>,
    /// The VDC's name.
    pub vdc_name: Option<String>,
    /// E.g. `POWERED_ON`.
    pub status: Option<String>,
    /// The IP address VCD reports for the VM, if any.
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

/// A VM's power state, from VCD's numeric VM status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerState {
    /// `POWERED_ON` (status 4).
    PoweredOn,
    /// `POWERED_OFF` (status 8).
    PoweredOff,
    /// `SUSPENDED` (status 3).
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

/// A network connection (NIC) of a VM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nic {
    /// The connection's index (`networkConnectionIndex`).
    pub index: u32,
    /// The name of the network the NIC is attached to.
    pub network: Option<String>,
    /// The NIC's IP address, if VCD knows one.
    pub ip_address: Option<String>,
    /// The NIC's MAC address.
    pub mac_address: Option<String>,
    /// Whether the NIC is connected.
    pub connected: bool,
}

/// A VM, from its legacy document (`/api/vApp/vm-<uuid>`), reduced to
/// what the CCM uses.
#[derive(Debug, Clone)]
pub struct Vm {
    /// The VM's URN, `urn:vcloud:vm:<uuid>`.
    pub id: String,
    /// The VM's name.
    pub name: String,
    /// The VM's power state.
    pub power: PowerState,
    /// The VM's NICs; empty when its document has no network section.
    pub nics: Vec<Nic>,
    /// The index of the primary NIC, if VCD names one.
    pub primary_nic_index: Option<u32>,
    /// The legacy href of the VM's vApp.
    pub vapp_href: Option<String>,
    /// The number of virtual CPUs, if VCD reports it.
    pub cpus: Option<u32>,
    /// The configured memory in MB, if VCD reports it.
    pub memory_mb: Option<u64>,
    /// The name of the VM sizing policy, when the VM has one.
    pub sizing_policy: Option<String>,
    /// The guest OS computer name from the guest customization section.
    pub computer_name: Option<String>,
}

impl Vm {
    /// The primary NIC, if the VM has one.
    pub fn primary_nic(&self) -> Option<&Nic> {
        let index = self.primary_nic_index?;
        self.nics.iter().find(|n| n.index == index)
    }
}

/// A vApp's id and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VApp {
    /// The vApp's URN, `urn:vcloud:vapp:<uuid>`.
    pub id: String,
    /// The vApp's name.
    pub name: String,
}

/// A vApp with the full document of every VM in it.
#[derive(Debug, Clone)]
pub struct VAppWithVms {
    /// The vApp's URN, `urn:vcloud:vapp:<uuid>`.
    pub id: String,
    /// The vApp's name.
    pub name: String,
    /// The vApp's VMs.
    pub vms: Vec<Vm>,
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

/// A section of the VM document; which fields are set depends on `_type`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Section {
    #[serde(rename = "_type")]
    section_type: Option<String>,
    primary_network_connection_index: Option<u32>,
    #[serde(default)]
    network_connection: Vec<NetworkConnection>,
    computer_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VmSpecSection {
    num_cpus: Option<u32>,
    memory_resource_mb: Option<MemoryResource>,
}

#[derive(Deserialize)]
struct MemoryResource {
    configured: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ComputePolicy {
    vm_sizing_policy: Option<PolicyRef>,
}

#[derive(Deserialize)]
struct PolicyRef {
    name: Option<String>,
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
    vm_spec_section: Option<VmSpecSection>,
    compute_policy: Option<ComputePolicy>,
}

impl From<VmBody> for Vm {
    fn from(body: VmBody) -> Self {
        let mut network = None;
        let mut computer_name = None;
        for section in body.section {
            match section.section_type.as_deref() {
                Some("NetworkConnectionSectionType") => network = Some(section),
                Some("GuestCustomizationSectionType") => computer_name = section.computer_name,
                _ => {}
            }
        }
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
            cpus: body.vm_spec_section.as_ref().and_then(|s| s.num_cpus),
            memory_mb: body
                .vm_spec_section
                .and_then(|s| s.memory_resource_mb)
                .and_then(|m| m.configured),
            sizing_policy: body
                .compute_policy
                .and_then(|p| p.vm_sizing_policy)
                .and_then(|p| p.name),
            computer_name: computer_name.filter(|name| !name.is_empty()),
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

/// VMs and their vApps. Made by [`VcdClient::vms`].
#[derive(Clone, Copy)]
pub struct Vms<'c> {
    pub(super) client: &'c VcdClient,
}

impl Vms<'_> {
    /// The VMs in `scope`, every page. Provider sessions query `adminVM`.
    #[tracing::instrument(name = "query_vms", skip(self))]
    pub async fn query(&self, scope: &VmScope) -> Result<Vec<VmRecord>, VcdError> {
        let query_type = if self.client.is_provider() {
            "adminVM"
        } else {
            "vm"
        };
        let mut filter = Filter::eq("isVAppTemplate", "false");
        match scope {
            VmScope::VApp(name) => filter = filter.and(Filter::eq("containerName", name)),
            VmScope::VAppPrefix(prefix) => {
                filter = filter.and(Filter::eq("containerName", &format!("{prefix}*")));
            }
            VmScope::Org => {}
        }
        let mut records = Vec::new();
        for page in 1.. {
            let request = ApiRequest::get("query_vms", "/api/query")
                .collection()
                .legacy()
                .query("type", query_type)
                .query("format", "records")
                .query("page", page)
                .query("pageSize", MAX_PAGE_SIZE)
                .query("filter", &filter);
            let reply: QueryPage = self.client.fetch(request).await?;
            let empty = reply.record.is_empty();
            records.extend(reply.record);
            if empty || records.len() >= reply.total {
                break;
            }
        }
        Ok(records)
    }

    /// A VM by URN (or bare UUID). VCD answers 403 for a VM that is gone.
    #[tracing::instrument(name = "get_vm", skip(self))]
    pub async fn get(&self, vm_id: &str) -> Result<Vm, VcdError> {
        let request =
            ApiRequest::get("get_vm", format!("/api/vApp/vm-{}", uuid_of(vm_id))).legacy();
        self.client.fetch::<VmBody>(request).await.map(Vm::from)
    }

    /// The vApp `vm` belongs to.
    #[tracing::instrument(name = "vm_vapp", skip(self, vm), fields(vm = %vm.name))]
    pub async fn vapp_of(&self, vm: &Vm) -> Result<VApp, VcdError> {
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
            .client
            .fetch(
                ApiRequest::get("get_vapp", path_of(href))
                    .legacy()
                    .collection(),
            )
            .await?;
        Ok(VApp {
            id: body.id,
            name: body.name,
        })
    }

    /// The vApp at `vapp_href` (a query record's `container`) with the full
    /// document of each of its VMs: one call for the whole vApp.
    #[tracing::instrument(name = "get_vapp_with_vms", skip(self))]
    pub async fn vapp_with_vms(&self, vapp_href: &str) -> Result<VAppWithVms, VcdError> {
        #[derive(Deserialize)]
        struct Children {
            #[serde(default)]
            vm: Vec<VmBody>,
        }
        #[derive(Deserialize)]
        struct VAppBody {
            id: String,
            name: String,
            children: Option<Children>,
        }
        let body: VAppBody = self
            .client
            .fetch(
                ApiRequest::get("get_vapp", path_of(vapp_href))
                    .legacy()
                    .collection(),
            )
            .await?;
        let vms = body.children.map(|c| c.vm).unwrap_or_default();
        Ok(VAppWithVms {
            id: body.id,
            name: body.name,
            vms: vms.into_iter().map(Vm::from).collect(),
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
            container: None,
            vdc: None,
            vdc_name: None,
            status: None,
            ip_address: None,
        };
        assert_eq!(record.id().as_deref(), Some("urn:vcloud:vm:1234"));
        assert_eq!(uuid_of("urn:vcloud:vm:abcd"), "abcd");
        assert_eq!(PowerState::from_code(4), PowerState::PoweredOn);
    }
}

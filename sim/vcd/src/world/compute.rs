//! VDCs, data-center groups, vApps and VMs.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Vdc {
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub allocation_type: String,
}

/// A data-center (VDC) group: 1–16 VDCs of one org joined so networks and
/// an edge gateway owned by the group are stretched to every member.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VdcGroup {
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub vdc_ids: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VApp {
    pub id: String,
    pub vdc_id: String,
    pub name: String,
}

/// Power states with the integer codes of the legacy API (`VAppStatuses`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PowerState {
    PoweredOn,
    PoweredOff,
    Suspended,
}

impl PowerState {
    pub fn code(self) -> i32 {
        match self {
            Self::PoweredOn => 4,
            Self::PoweredOff => 8,
            Self::Suspended => 3,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::PoweredOn => "POWERED_ON",
            Self::PoweredOff => "POWERED_OFF",
            Self::Suspended => "SUSPENDED",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Nic {
    pub network: String,
    pub ip: String,
    #[serde(default)]
    pub mac: String,
    #[serde(default = "connected")]
    pub connected: bool,
}

fn connected() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Vm {
    pub id: String,
    pub vapp_id: String,
    pub name: String,
    pub power: PowerState,
    pub cpus: u32,
    pub memory_mb: u32,
    pub guest_os: String,
    pub nics: Vec<Nic>,
    pub primary_nic: usize,
    pub sizing_policy: Option<SizingPolicy>,
    pub computer_name: String,
}

/// A VM sizing policy reference (`urn:vcloud:vdcComputePolicy:<uuid>`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SizingPolicy {
    pub id: String,
    pub name: String,
}

impl Vm {
    pub fn primary_ip(&self) -> Option<&str> {
        self.nics.get(self.primary_nic).map(|nic| nic.ip.as_str())
    }
}

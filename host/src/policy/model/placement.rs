//! Where a Service's virtual services run: the gateway's service engine
//! groups in the input, the chosen one in the decision. Contract 0.3.0.

use serde::{Deserialize, Serialize};
use wasmtime::component::{ComponentType, Lift, Lower};

/// A service engine group assigned to the gateway.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ServiceEngineGroup {
    /// The group's name in VCD.
    pub name: String,
    /// How many more virtual services it takes for this gateway; 0 when its
    /// assignment states no maximum.
    #[component(name = "free-virtual-services")]
    pub free_virtual_services: u32,
}

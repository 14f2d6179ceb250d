//! The service engine group (contract 0.3.0): `vcd-ccm.io/service-engine-group`
//! names one of the gateway's groups; without it the host keeps a virtual
//! service where it runs and places new ones in the first group with room.

use crate::read::{get, invalid};
use crate::vcd::lb_policy::types::{DecisionError, DecisionInput};

/// The name of a service engine group assigned to the gateway.
pub const SERVICE_ENGINE_GROUP: &str = "vcd-ccm.io/service-engine-group";

pub fn decide(input: &DecisionInput) -> Result<Option<String>, DecisionError> {
    let Some(name) = get(&input.service, SERVICE_ENGINE_GROUP)
        .map(str::trim)
        .filter(|name| !name.is_empty())
    else {
        return Ok(None);
    };
    let groups = &input.service_engine_groups;
    if groups.iter().any(|group| group.name == name) {
        return Ok(Some(name.to_string()));
    }
    let assigned: Vec<&str> = groups.iter().map(|group| group.name.as_str()).collect();
    Err(invalid(
        SERVICE_ENGINE_GROUP,
        format!(
            "no service engine group named {name:?} is assigned to edge gateway {}; assigned: {}",
            input.cluster.gateway,
            if assigned.is_empty() {
                "none".to_string()
            } else {
                assigned.join(", ")
            }
        ),
    ))
}

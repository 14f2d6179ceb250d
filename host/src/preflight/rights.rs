//! The rights of the session's roles against every right the CCM's calls
//! need with these settings ([`Uses::required`]); missing ones by name.

use std::collections::BTreeSet;

use super::findings::{Outcome, bounded};
use crate::lb::LbConfig;
use crate::vcd::VcdClient;
use crate::vcd::resources::pool::MEMBER_GROUPS_SINCE;
use crate::vcd::rights::{Right, Uses};
use crate::vcd::version::ApiVersion;

/// What decides the rights needed: the settings, whether the gateway
/// takes its addresses from IP Spaces (`None`: the gateway was not read),
/// and the API version (pools' member groups).
pub(super) fn uses(
    lb: &LbConfig,
    load_balancers: bool,
    ip_spaces: Option<bool>,
    version: ApiVersion,
) -> Uses {
    Uses {
        load_balancers,
        nat: lb.mode().is_ok_and(|mode| mode.uses_nat()),
        firewall: lb.manage_firewall,
        member_groups: version >= MEMBER_GROUPS_SINCE,
        ip_spaces: ip_spaces.unwrap_or(false),
        rde: lb.cluster_id.starts_with("urn:vcloud:entity:"),
    }
}

fn listed(rights: &[&Right]) -> String {
    rights
        .iter()
        .map(|r| format!("\"{}\" ({})", r.name, r.used_for))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rights check. Reading the role's rights may itself be refused; the
/// check is then skipped, not failed: the CCM does not read them.
pub(super) async fn check(client: &VcdClient, uses: Uses, gateway_read: bool) -> Outcome {
    let unreadable = |error: String| {
        Outcome::skipped(format!(
            "cannot read the role's rights ({error}); compare the role with the rights listed in the operations guide"
        ))
    };
    let session = match bounded(client.sessions().current()).await {
        Ok(Ok(session)) => session,
        Ok(Err(error)) => return unreadable(error.to_string()),
        Err(failure) => return unreadable(failure.problem),
    };
    if session.role_refs.is_empty() {
        return Outcome::skipped("VCD names no role for this session");
    }
    let mut held = BTreeSet::new();
    let mut roles = Vec::new();
    for role in &session.role_refs {
        roles.push(role.name.clone().unwrap_or_else(|| role.id.clone()));
        match bounded(client.sessions().role_rights(&role.id)).await {
            Ok(Ok(rights)) => held.extend(rights),
            Ok(Err(error)) => return unreadable(error.to_string()),
            Err(failure) => return unreadable(failure.problem),
        }
    }
    let roles = roles.join(", ");
    let required = uses.required();
    let missing: Vec<&Right> = required.iter().filter(|r| !held.contains(r.name)).collect();
    if !missing.is_empty() {
        return Outcome::fail(
            format!(
                "role {roles} lacks {} of the {} rights the CCM needs: {}",
                missing.len(),
                required.len(),
                listed(&missing)
            ),
            "Add them to the role (Administration > Roles), or ask the provider to publish them to the org in a rights bundle",
        );
    }
    let optional = uses.optional();
    let lacking: Vec<&Right> = optional.iter().filter(|r| !held.contains(r.name)).collect();
    let mut detail = format!(
        "role {roles} holds the {} rights the CCM needs",
        required.len()
    );
    if !lacking.is_empty() {
        detail.push_str(&format!(
            "; without {} only the Services that need it fail",
            listed(&lacking)
        ));
    }
    if uses.load_balancers && !gateway_read {
        detail.push_str("; the IP Space rights are not checked, the gateway was not read");
    }
    Outcome::pass(detail)
}

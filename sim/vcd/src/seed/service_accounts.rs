//! Seeds the scenario's `serviceAccounts`: each is a user of its org (no
//! password login) holding its roles, plus the account with its first
//! refresh token.

use crate::ids::{new_urn, new_uuid};
use crate::scenario::{ScenarioError, ServiceAccountSpec};
use crate::world::World;
use crate::world::identity::{Role, User};
use crate::world::rights;
use crate::world::service_account::ServiceAccount;

pub fn add_service_accounts(
    world: &mut World,
    specs: &[ServiceAccountSpec],
) -> Result<(), ScenarioError> {
    for spec in specs {
        let org_id = world
            .org_by_name(&spec.org)
            .ok_or_else(|| ScenarioError::Dangling {
                kind: "org",
                name: spec.org.clone(),
                by: spec.name.clone(),
            })?
            .id
            .clone();
        if crate::world::service_account::find_account(world, &spec.name).is_some() {
            return Err(ScenarioError::Duplicate {
                kind: "service account",
                name: spec.name.clone(),
            });
        }
        for role in &spec.roles {
            if !world
                .roles
                .iter()
                .any(|r| r.org_id == org_id && &r.name == role)
            {
                world.roles.push(Role {
                    id: new_urn("role"),
                    org_id: org_id.clone(),
                    name: role.clone(),
                    rights: rights::of_unlisted_role(role),
                });
            }
        }
        let user_id = new_urn("user");
        world.users.push(User {
            id: user_id.clone(),
            org_id,
            name: spec.name.clone(),
            // Service accounts have no password: none a client could send.
            password: format!("\u{0}{}", new_uuid()),
            roles: spec.roles.clone(),
        });
        world.service_accounts.push(ServiceAccount {
            id: new_urn("serviceAccount"),
            name: spec.name.clone(),
            user_id,
            refresh_token: Some(spec.refresh_token.clone()),
            voided: Vec::new(),
            exchanges: 0,
            reuses: 0,
            access_token_ttl_ms: spec.access_token_ttl_ms,
        });
    }
    Ok(())
}

//! Service accounts (VCD 37.0+): an org's non-human identity whose refresh
//! token is one-time use. Each exchange at the token endpoint answers a new
//! refresh token and voids the one used; a voided token answers
//! `invalid_grant`, as an OAuth server does. Each account is backed by a
//! [`User`] of its org, so the access tokens it gets resolve like a user's.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::World;
use super::identity::User;
use crate::ids::new_uuid;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccount {
    pub id: String,
    pub name: String,
    /// The [`User`] its access tokens stand for.
    pub user_id: String,
    /// The one refresh token that works now; `None` once revoked.
    pub refresh_token: Option<String>,
    /// Every token this account had that no longer works, oldest first.
    #[serde(default)]
    pub voided: Vec<String>,
    /// Exchanges VCD answered with a new token.
    #[serde(default)]
    pub exchanges: u64,
    /// Exchanges that sent a voided token.
    #[serde(default)]
    pub reuses: u64,
    /// Lifetime of its access tokens; `None`: the `tokenTtlMs` knob.
    #[serde(default)]
    pub access_token_ttl_ms: Option<u64>,
}

/// What the token endpoint does with a service account's refresh token.
#[derive(Debug)]
pub enum Exchange {
    /// The token was current: a new one replaces it.
    Issued {
        user: User,
        refresh_token: String,
        ttl: Option<Duration>,
    },
    /// The token was this account's once and has been used or revoked.
    Voided,
}

/// A refresh token in the same shape as VCD's: opaque, 32 characters.
pub fn new_refresh_token() -> String {
    new_uuid().replace('-', "")
}

impl ServiceAccount {
    /// Makes `next` the current token, voiding the one before.
    fn rotate(&mut self, next: Option<String>) {
        if let Some(old) = self.refresh_token.take() {
            self.voided.push(old);
        }
        self.refresh_token = next;
    }
}

/// Exchanges `token` if it is (or was) a service account's of an org
/// `org_matches` accepts; `None` when no service account knows it.
pub fn exchange(
    world: &mut World,
    token: &str,
    org_matches: impl Fn(&str) -> bool,
) -> Option<Exchange> {
    let index = world.service_accounts.iter().position(|a| {
        a.refresh_token.as_deref() == Some(token) || a.voided.iter().any(|v| v == token)
    })?;
    let user = super::find(&world.users, &world.service_accounts[index].user_id)?.clone();
    let org = super::find(&world.orgs, &user.org_id)?;
    let account = &mut world.service_accounts[index];
    if account.refresh_token.as_deref() != Some(token) {
        account.reuses += 1;
        return Some(Exchange::Voided);
    }
    if !org_matches(&org.name) {
        return None;
    }
    let next = new_refresh_token();
    account.rotate(Some(next.clone()));
    account.exchanges += 1;
    Some(Exchange::Issued {
        user,
        refresh_token: next,
        ttl: account.access_token_ttl_ms.map(Duration::from_millis),
    })
}

/// The account named `name`.
pub fn find_account<'a>(world: &'a World, name: &str) -> Option<&'a ServiceAccount> {
    world.service_accounts.iter().find(|a| a.name == name)
}

/// What an org admin does after a lock-out: a new token for the account
/// (the device flow), the current one voided. Returns the new token.
pub fn issue_token(world: &mut World, name: &str) -> Option<String> {
    let account = world.service_accounts.iter_mut().find(|a| a.name == name)?;
    let next = new_refresh_token();
    account.rotate(Some(next.clone()));
    Some(next)
}

/// Voids a service account's current refresh token; `false` when no
/// account holds it.
pub fn revoke_token(world: &mut World, token: &str) -> bool {
    match world
        .service_accounts
        .iter_mut()
        .find(|a| a.refresh_token.as_deref() == Some(token))
    {
        Some(account) => {
            account.rotate(None);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{exchange, find_account};
    use crate::{Scenario, seed::build_world};

    const SCENARIO: &str = "
orgs:
  - name: org1
    users: [{name: u, password: pw}]
serviceAccounts:
  - {name: ccm, org: org1, roles: [CCM], refreshToken: first, accessTokenTtlMs: 1500}
";

    #[test]
    fn each_exchange_voids_the_token_used() {
        let scenario = Scenario::from_yaml(SCENARIO).unwrap();
        let mut world = build_world(&scenario).unwrap();
        let any = |_: &str| true;
        let Some(super::Exchange::Issued {
            refresh_token: second,
            ttl,
            ..
        }) = exchange(&mut world, "first", any)
        else {
            panic!("the first token is exchanged")
        };
        assert_eq!(ttl, Some(std::time::Duration::from_millis(1500)));
        assert!(matches!(
            exchange(&mut world, "first", any),
            Some(super::Exchange::Voided)
        ));
        assert!(matches!(
            exchange(&mut world, &second, any),
            Some(super::Exchange::Issued { .. })
        ));
        let account = find_account(&world, "ccm").unwrap();
        assert_eq!((account.exchanges, account.reuses), (2, 1));
        assert!(exchange(&mut world, "other", any).is_none());
        assert!(world.roles.iter().any(|r| r.name == "CCM"));
    }
}

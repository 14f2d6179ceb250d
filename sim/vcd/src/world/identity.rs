//! Orgs, users and their roles, API (refresh) tokens and access tokens.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The provider org: its users are system administrators.
pub const SYSTEM_ORG: &str = "System";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Org {
    pub id: String,
    pub name: String,
    pub full_name: String,
    pub enabled: bool,
}

impl Org {
    pub fn is_system(&self) -> bool {
        self.name.eq_ignore_ascii_case(SYSTEM_ORG)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub password: String,
    pub roles: Vec<String>,
}

/// A role of an org: users name it, and it holds rights by name, as
/// `GET /cloudapi/1.0.0/roles/{id}/rights` lists them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Role {
    pub id: String,
    pub org_id: String,
    pub name: String,
    pub rights: Vec<String>,
}

/// A long-lived API token: never expires, can be revoked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiToken {
    pub value: String,
    pub user_id: String,
    pub revoked: bool,
}

/// A bearer token handed out by a login or a refresh-token grant.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessToken {
    pub token: String,
    pub session_id: String,
    pub user_id: String,
    pub revoked: bool,
    #[serde(skip)]
    pub expires_at: Instant,
    #[serde(skip)]
    pub last_used: Instant,
}

impl AccessToken {
    pub fn is_valid(&self, now: Instant, idle_timeout: Duration) -> bool {
        !self.revoked && now < self.expires_at && now.duration_since(self.last_used) < idle_timeout
    }
}

//! The edge gateway firewall (NSX-T): its user-defined rules, read whole
//! and, since the API creates rules only by PUTting the whole list, edited
//! as a read-modify-write that keeps every other rule byte for byte; single
//! rules are updated and deleted by id.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::nat::RuleVersion;
use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::delete::DeleteRight;
use crate::vcd::delete::delete_object;
use crate::vcd::errors::{CallSite, VcdError};
use crate::vcd::reference::EntityRef;
use crate::vcd::serialize::write_on_gateway;
use crate::vcd::tasks::write;

/// How often an edit is tried when the list changed under it.
const EDIT_ATTEMPTS: usize = 3;

/// The API's limit on user-defined rules per gateway.
pub const MAX_USER_RULES: usize = 1000;

fn rules_path(gateway_id: &str) -> String {
    format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}/firewall/rules")
}

fn enabled() -> bool {
    true
}

/// One gateway firewall rule (`EdgeFirewallRule`), as the CCM writes its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirewallRule {
    /// The rule's id; `None` until VCD has created it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The rule's name.
    pub name: String,
    /// Free text; the CCM's ownership tag on its rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// IP sets the traffic comes from; empty means any source.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_empty"
    )]
    pub source_firewall_groups: Vec<EntityRef>,
    /// IP sets the traffic goes to; empty means any destination.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_empty"
    )]
    pub destination_firewall_groups: Vec<EntityRef>,
    /// Port profiles the rule matches; empty means any port.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_empty"
    )]
    pub application_port_profiles: Vec<EntityRef>,
    /// `IPV4`, `IPV6` or `IPV4_IPV6`.
    pub ip_protocol: Option<String>,
    /// `ALLOW`, `DROP`, `REJECT` (API 35.2+).
    pub action_value: Option<String>,
    /// `IN`, `OUT` or `IN_OUT`.
    pub direction: Option<String>,
    /// Whether packets are logged; absent or null is false.
    #[serde(default, deserialize_with = "null_as_empty")]
    pub logging: bool,
    /// Whether the rule applies; true when absent.
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// The optimistic lock: set on rules read from VCD, required on update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<RuleVersion>,
    /// Every other field, kept so a PUT sends back what VCD set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// VCD writes `null` for an absent list or flag.
fn null_as_empty<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// What an edit of the user-defined list does with the list it was given.
pub enum ListEdit {
    /// The list is as wanted: nothing is written.
    Keep,
    /// Write this list instead.
    Replace(Vec<Value>),
}

fn unexpected(call: &CallSite, detail: String) -> VcdError {
    VcdError::Unexpected {
        call: call.clone(),
        detail,
    }
}

/// The user-defined rules of an `EdgeFirewallRules` body.
fn user_rules(call: &CallSite, body: &Value) -> Result<Vec<Value>, VcdError> {
    match body.get("userDefinedRules") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(rules)) => Ok(rules.clone()),
        Some(other) => Err(unexpected(
            call,
            format!("userDefinedRules is not a list: {other}"),
        )),
    }
}

/// A write refused because a rule changed since it was read: VCD answers
/// a stale `version` with a 400 naming the version (409/412 elsewhere).
fn is_stale(error: &VcdError) -> bool {
    match error {
        VcdError::Conflict { .. } => true,
        VcdError::Rejected { message, .. } => message.to_ascii_lowercase().contains("version"),
        _ => false,
    }
}

/// A rule's identity for the after-write check: its id, else its name.
fn identity(rule: &Value) -> Option<&str> {
    rule.get("id")
        .and_then(Value::as_str)
        .or_else(|| rule.get("name").and_then(Value::as_str))
}

/// The rule without its version, which VCD bumps on its own.
fn unversioned(rule: &Value) -> Value {
    let mut rule = rule.clone();
    if let Some(map) = rule.as_object_mut() {
        map.remove("version");
    }
    rule
}

/// Edge gateway firewall rules. Made by [`VcdClient::firewall`].
#[derive(Clone, Copy)]
pub struct Firewall<'c> {
    pub(super) client: &'c VcdClient,
}

impl Firewall<'_> {
    /// The gateway's user-defined rules, in order, as VCD returned them.
    #[tracing::instrument(name = "list_user_firewall_rules", skip(self))]
    pub async fn user_rules(&self, gateway_id: &str) -> Result<Vec<Value>, VcdError> {
        let path = rules_path(gateway_id);
        let call = self.client.call_of("list_firewall_rules", &path);
        let body: Value = self
            .client
            .fetch(ApiRequest::get("list_firewall_rules", &path))
            .await?;
        user_rules(&call, &body)
    }

    /// Reads the user-defined rules, lets `edit` change the list and PUTs
    /// it, holding the gateway's write slot so no write of this process
    /// lands in between. The rules `edit` did not touch must read back
    /// unchanged (bar their version); a write refused because a rule changed
    /// meanwhile is tried again from a fresh read.
    pub async fn edit_user_rules(
        &self,
        gateway_id: &str,
        mut edit: impl FnMut(&[Value]) -> ListEdit,
    ) -> Result<Vec<Value>, VcdError> {
        let path = rules_path(gateway_id);
        let call = self.client.call_of("update_firewall_rules", &path);
        let _slot = self.client.gateway_locks().acquire(gateway_id).await;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let before = self.user_rules(gateway_id).await?;
            let wanted = match edit(&before) {
                ListEdit::Keep => return Ok(before),
                ListEdit::Replace(wanted) => wanted,
            };
            if wanted.len() > MAX_USER_RULES {
                return Err(VcdError::Rejected {
                    call: call.clone(),
                    status: 400,
                    minor: "BAD_REQUEST".into(),
                    message: format!(
                        "the gateway would hold {} user-defined firewall rules; VCD allows at most {MAX_USER_RULES}",
                        wanted.len()
                    ),
                });
            }
            let request = ApiRequest::new("update_firewall_rules", Method::PUT, &path)
                .json(json!({ "userDefinedRules": wanted }));
            match write(self.client, request).await {
                Err(error) if attempt < EDIT_ATTEMPTS && is_stale(&error) => {
                    tracing::info!(gateway = gateway_id, %error, "the firewall rules changed since they were read; reading them again");
                    continue;
                }
                other => other?,
            };
            let after = self.user_rules(gateway_id).await?;
            check_kept(&call, &before, &wanted, &after)?;
            return Ok(after);
        }
    }

    /// The rule `rule_id` of the gateway.
    #[tracing::instrument(name = "get_firewall_rule", skip(self))]
    pub async fn get(&self, gateway_id: &str, rule_id: &str) -> Result<FirewallRule, VcdError> {
        self.client
            .fetch(ApiRequest::get(
                "get_firewall_rule",
                format!("{}/{rule_id}", rules_path(gateway_id)),
            ))
            .await
    }

    /// PUTs one rule, which must carry the `version` it was read with.
    #[tracing::instrument(name = "update_firewall_rule", skip(self, rule), fields(rule = %rule.name))]
    pub async fn update(
        &self,
        gateway_id: &str,
        rule: &FirewallRule,
    ) -> Result<FirewallRule, VcdError> {
        let (Some(id), Some(_)) = (rule.id.as_deref(), rule.version) else {
            return Err(VcdError::Missing {
                what: "firewall rule id and version",
                name: rule.name.clone(),
                scope: "(update a firewall rule read from VCD)".to_string(),
            });
        };
        let path = format!("{}/{id}", rules_path(gateway_id));
        let call = self.client.call_of("update_firewall_rule", &path);
        let body = serde_json::to_value(rule)
            .map_err(|e| unexpected(&call, format!("cannot encode rule {}: {e}", rule.name)))?;
        let request = ApiRequest::new("update_firewall_rule", Method::PUT, &path).json(body);
        write_on_gateway(self.client, gateway_id, request).await?;
        self.get(gateway_id, id).await
    }

    /// Deletes one rule; one already gone counts as deleted.
    #[tracing::instrument(name = "delete_firewall_rule", skip(self))]
    pub async fn delete(&self, gateway_id: &str, rule_id: &str) -> Result<(), VcdError> {
        let request = ApiRequest::new(
            "delete_firewall_rule",
            Method::DELETE,
            format!("{}/{rule_id}", rules_path(gateway_id)),
        );
        delete_object(
            self.client,
            Some(gateway_id),
            request,
            DeleteRight::Firewall,
            || self.get(gateway_id, rule_id),
        )
        .await
    }
}

/// Every rule that was in the list before and that the edit kept as it was
/// must read back the same (bar its version): anything else means the write
/// changed a rule that is not ours.
fn check_kept(
    call: &CallSite,
    before: &[Value],
    wanted: &[Value],
    after: &[Value],
) -> Result<(), VcdError> {
    for rule in before.iter().filter(|r| wanted.contains(r)) {
        let Some(id) = identity(rule) else { continue };
        let now = after.iter().find(|r| identity(r) == Some(id));
        if now.map(unversioned) != Some(unversioned(rule)) {
            return Err(unexpected(
                call,
                format!("firewall rule {id} did not read back as it was before the write"),
            ));
        }
    }
    Ok(())
}

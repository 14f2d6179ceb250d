//! NSX-T NAT rules of a gateway: create, list (cursor pages), update (with
//! the `version` VCD requires) and delete.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::encode;
use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::create::create_checked;
use crate::vcd::delete::DeleteRight;
use crate::vcd::delete::delete_object;
use crate::vcd::errors::VcdError;
use crate::vcd::paging::MAX_PAGE_SIZE;
use crate::vcd::paging::list_by_cursor;
use crate::vcd::reference::EntityRef;
use crate::vcd::serialize::write_on_gateway;
use crate::vcd::task::Task;

fn rules_path(gateway_id: &str) -> String {
    format!("/cloudapi/1.0.0/edgeGateways/{gateway_id}/nat/rules")
}

fn enabled() -> bool {
    true
}

/// VCD's optimistic lock on a rule: an update must carry the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleVersion {
    /// The current version number; VCD increases it on every update.
    pub version: i64,
}

/// An NSX-T NAT rule of an edge gateway. Read, changed and PUT back
/// whole, so fields this client does not model are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NatRule {
    /// The rule's id, a bare UUID (not a URN). `None` until VCD has created the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The rule's name. VCD does not require it to be unique; the CCM keeps
    /// its own rules' names unique.
    pub name: String,
    /// Free text, if set.
    pub description: Option<String>,
    /// Whether the rule is applied; true when absent.
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// `DNAT`, `SNAT`, `NO_DNAT`, `NO_SNAT` or `REFLEXIVE` (API 36+).
    #[serde(rename = "type")]
    pub rule_type: Option<String>,
    /// One IP or CIDR. For DNAT, the external address incoming traffic is
    /// sent to; for SNAT, the address outgoing traffic leaves with.
    pub external_addresses: String,
    /// One IP or CIDR. For DNAT, the address incoming traffic is translated
    /// to; for SNAT, the workloads' address.
    pub internal_addresses: String,
    /// For DNAT, the external port or port range to forward; VCD's default
    /// is `ANY`.
    pub dnat_external_port: Option<String>,
    /// For DNAT, its destination port is the internal port.
    pub application_port_profile: Option<EntityRef>,
    /// The optimistic lock: set on rules read from VCD, required on update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<RuleVersion>,
    /// Every other field, kept so a PUT sends back what VCD (or another tool) set.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Edge gateway NAT rules. Made by [`VcdClient::nat_rules`].
#[derive(Clone, Copy)]
pub struct NatRules<'c> {
    pub(super) client: &'c VcdClient,
}

impl NatRules<'_> {
    /// Every NAT rule of the gateway.
    #[tracing::instrument(name = "list_nat_rules", skip(self))]
    pub async fn list(&self, gateway_id: &str) -> Result<Vec<NatRule>, VcdError> {
        list_by_cursor(
            self.client,
            "list_nat_rules",
            &rules_path(gateway_id),
            MAX_PAGE_SIZE,
        )
        .await
    }

    /// The NAT rule `rule_id` of the gateway.
    #[tracing::instrument(name = "get_nat_rule", skip(self))]
    pub async fn get(&self, gateway_id: &str, rule_id: &str) -> Result<NatRule, VcdError> {
        self.client
            .fetch(ApiRequest::get(
                "get_nat_rule",
                format!("{}/{rule_id}", rules_path(gateway_id)),
            ))
            .await
    }

    /// Creates the rule and returns its id (from the task); a create whose
    /// answer was lost is recognised by name (NAT names are not unique in
    /// VCD, but ours are).
    #[tracing::instrument(name = "create_nat_rule", skip(self, rule), fields(rule = %rule.name))]
    pub async fn create(&self, gateway_id: &str, rule: &NatRule) -> Result<String, VcdError> {
        let path = rules_path(gateway_id);
        let call = self.client.call_of("create_nat_rule", &path);
        let body = encode(&call, "NAT rule", &rule.name, rule)?;
        let (body, call, path) = (&body, &call, &path);
        create_checked(
            self.client,
            "create_nat_rule",
            || async move {
                let request =
                    ApiRequest::new("create_nat_rule", Method::POST, path).encoded(body.clone());
                let task = write_on_gateway(self.client, gateway_id, request).await?;
                Task::created_id(task, call, "NAT rule")
            },
            || async move {
                let rules = self.list(gateway_id).await?;
                Ok(rules
                    .into_iter()
                    .find(|r| r.name == rule.name)
                    .and_then(|r| r.id))
            },
        )
        .await
    }

    /// PUTs the whole rule `rule_id`. It must carry the `version` it was
    /// read with; VCD refuses an update of a rule changed since (a conflict).
    #[tracing::instrument(name = "update_nat_rule", skip(self, rule), fields(rule = %rule.name))]
    pub async fn update(
        &self,
        gateway_id: &str,
        rule_id: &str,
        rule: &NatRule,
    ) -> Result<(), VcdError> {
        if rule.version.is_none() {
            return Err(VcdError::Missing {
                what: "NAT rule version",
                name: rule.name.clone(),
                scope: "(update a NAT rule read from VCD)".to_string(),
            });
        }
        let path = format!("{}/{rule_id}", rules_path(gateway_id));
        let body = encode(
            &self.client.call_of("update_nat_rule", &path),
            "NAT rule",
            &rule.name,
            &NatRule {
                id: Some(rule_id.to_string()),
                ..rule.clone()
            },
        )?;
        let request = ApiRequest::new("update_nat_rule", Method::PUT, &path).encoded(body);
        write_on_gateway(self.client, gateway_id, request)
            .await
            .map(|_| ())
    }

    /// Deletes the rule; one already gone counts as deleted, one the role may
    /// not delete is [`VcdError::DeleteForbidden`].
    #[tracing::instrument(name = "delete_nat_rule", skip(self))]
    pub async fn delete(&self, gateway_id: &str, rule_id: &str) -> Result<(), VcdError> {
        let request = ApiRequest::new(
            "delete_nat_rule",
            Method::DELETE,
            format!("{}/{rule_id}", rules_path(gateway_id)),
        );
        delete_object(
            self.client,
            Some(gateway_id),
            request,
            DeleteRight::Nat,
            || self.get(gateway_id, rule_id),
        )
        .await
    }
}

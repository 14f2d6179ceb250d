//! NAT rules and application port profiles, kept in their wire form.

use serde::{Deserialize, Serialize};

use super::Ref;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectVersion {
    pub version: i64,
}

fn enabled_by_default() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NatRuleBody {
    pub id: Option<String>,
    pub name: String,
    pub description: Option<String>,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    pub rule_type: Option<String>,
    #[serde(rename = "type")]
    pub nat_type: Option<String>,
    pub application_port_profile: Option<Ref>,
    pub external_addresses: String,
    pub internal_addresses: String,
    pub internal_port: Option<String>,
    pub dnat_external_port: Option<String>,
    #[serde(default)]
    pub logging: bool,
    #[serde(default)]
    pub system_rule: bool,
    pub snat_destination_addresses: Option<String>,
    pub firewall_match: Option<String>,
    pub priority: Option<i32>,
    pub version: Option<ObjectVersion>,
    pub applied_to: Option<Ref>,
}

impl NatRuleBody {
    /// `type` wins over the deprecated `ruleType`.
    pub fn kind(&self) -> &str {
        self.nat_type
            .as_deref()
            .or(self.rule_type.as_deref())
            .unwrap_or("DNAT")
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NatRule {
    pub gateway_id: String,
    pub body: NatRuleBody,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationPort {
    pub name: Option<String>,
    pub protocol: String,
    #[serde(default)]
    pub destination_ports: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppPortProfile {
    pub id: Option<String>,
    pub name: String,
    pub description: Option<String>,
    /// `SYSTEM`, `PROVIDER` or `TENANT`.
    pub scope: String,
    #[serde(default)]
    pub application_ports: Vec<ApplicationPort>,
    pub org_ref: Option<Ref>,
    /// Required on create, never returned on read.
    #[serde(skip_serializing)]
    pub context_entity_id: Option<String>,
    pub network_provider_scope: Option<String>,
}

impl AppPortProfile {
    /// NAT can use a profile with exactly one port entry and one destination port.
    pub fn usable_for_nat(&self) -> bool {
        matches!(self.application_ports.as_slice(), [port] if port.destination_ports.len() <= 1)
    }
}

//! NAT rules and application port profiles, kept in their wire form.

use serde::{Deserialize, Serialize};

use super::Ref;
use crate::strict::{ReadOnly, definition};

/// The optimistic lock of NAT and firewall rules.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct ObjectVersion {
    pub version: i64,
}
definition!(ObjectVersion, "ObjectVersion", serialize);

fn enabled_by_default() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
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

definition!(NatRuleBody, "EdgeNatRule", serialize);

impl NatRuleBody {
    /// `type` wins over the deprecated `ruleType`.
    pub fn kind(&self) -> &str {
        self.nat_type
            .as_deref()
            .or(self.rule_type.as_deref())
            .unwrap_or("DNAT")
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NatRule {
    pub gateway_id: String,
    pub body: NatRuleBody,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplicationPort {
    pub name: Option<String>,
    pub protocol: String,
    #[serde(default)]
    pub destination_ports: Vec<String>,
}
definition!(ApplicationPort, "ApplicationPortList", serialize);

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
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
    #[serde(default, skip_serializing, rename = "status")]
    _status: ReadOnly,
    #[serde(default, skip_serializing, rename = "usableForNAT")]
    _usable_for_nat: ReadOnly,
}
definition!(AppPortProfile, "ApplicationPortProfile", serialize);

impl AppPortProfile {
    /// A built-in NSX profile: one protocol and port, visible to all.
    pub fn system(name: &str, protocol: &str, port: &str) -> Self {
        Self {
            id: Some(crate::ids::new_urn("applicationPortProfile")),
            name: name.to_string(),
            description: Some(format!("System profile {name}")),
            scope: "SYSTEM".to_string(),
            application_ports: vec![ApplicationPort {
                name: None,
                protocol: protocol.to_string(),
                destination_ports: vec![port.to_string()],
            }],
            org_ref: None,
            context_entity_id: None,
            network_provider_scope: None,
            _status: None,
            _usable_for_nat: None,
        }
    }

    /// NAT can use a profile with exactly one port entry and one destination port.
    pub fn usable_for_nat(&self) -> bool {
        matches!(self.application_ports.as_slice(), [port] if port.destination_ports.len() <= 1)
    }
}

//! The edge gateway firewall: user-defined rules per gateway (system and
//! default rules are fixed and read-only here) and IP-set firewall groups,
//! kept in their wire form. Bodies refuse properties the 37.2 spec does not
//! define, as VCD's deserializer does.

use serde::{Deserialize, Serialize};

use super::Ref;
use super::nat::ObjectVersion;
use crate::strict::{ReadOnly, definition};

/// The API's limit on user-defined rules per gateway.
pub const MAX_USER_RULES: usize = 1000;

/// `EdgeFirewallRule` (all of `FirewallRule`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct FirewallRuleBody {
    pub id: Option<String>,
    pub name: String,
    pub description: Option<String>,
    pub source_firewall_groups: Option<Vec<Ref>>,
    pub destination_firewall_groups: Option<Vec<Ref>>,
    pub application_port_profiles: Option<Vec<Ref>>,
    pub ip_protocol: Option<String>,
    pub action: Option<String>,
    pub action_value: Option<String>,
    pub direction: Option<String>,
    pub logging: Option<bool>,
    pub network_context_profiles: Option<Vec<Ref>>,
    pub enabled: Option<bool>,
    pub version: Option<ObjectVersion>,
    pub comments: Option<String>,
    pub applied_to: Option<Ref>,
}
definition!(FirewallRuleBody, "EdgeFirewallRule", serialize);

impl FirewallRuleBody {
    /// Every firewall group the rule names.
    pub fn groups(&self) -> impl Iterator<Item = &Ref> {
        self.source_firewall_groups
            .iter()
            .chain(&self.destination_firewall_groups)
            .flatten()
    }

    /// `actionValue`, else the deprecated `action`.
    pub fn action(&self) -> Option<&str> {
        self.action_value.as_deref().or(self.action.as_deref())
    }
}

/// `EdgeFirewallRules` as written: the user-defined list, and the default
/// rules whose action may change. System rules and status are read-only.
#[derive(Debug, Clone, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct FirewallRulesBody {
    pub user_defined_rules: Option<Vec<FirewallRuleBody>>,
    pub default_rules: Option<Vec<FirewallRuleBody>>,
    #[serde(default, rename = "systemRules")]
    _system_rules: ReadOnly<Vec<FirewallRuleBody>>,
    #[serde(default, rename = "status")]
    _status: ReadOnly,
}
definition!(FirewallRulesBody, "EdgeFirewallRules");

/// A user-defined rule of a gateway; the gateway's list keeps their order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirewallRule {
    pub gateway_id: String,
    pub body: FirewallRuleBody,
}

/// The rules around a gateway's user-defined list: one system rule before
/// it (read-only) and one default rule after it, whose action alone can
/// change.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayFirewall {
    pub gateway_id: String,
    pub system_rule: FirewallRuleBody,
    pub default_rule: FirewallRuleBody,
}

impl GatewayFirewall {
    /// A new gateway's: its default rule drops what no rule allows.
    pub fn new(gateway_id: &str) -> Self {
        Self {
            gateway_id: gateway_id.to_string(),
            system_rule: fixed_rule("Allow ALB health monitors", "ALLOW"),
            default_rule: fixed_rule("default_rule", "DROP"),
        }
    }
}

fn fixed_rule(name: &str, action: &str) -> FirewallRuleBody {
    FirewallRuleBody {
        id: Some(crate::ids::new_urn("firewallRule")),
        name: name.to_string(),
        description: None,
        source_firewall_groups: None,
        destination_firewall_groups: None,
        application_port_profiles: None,
        ip_protocol: Some("IPV4_IPV6".to_string()),
        action: None,
        action_value: Some(action.to_string()),
        direction: Some("IN_OUT".to_string()),
        logging: Some(false),
        network_context_profiles: None,
        enabled: Some(true),
        version: Some(ObjectVersion { version: 0 }),
        comments: None,
        applied_to: None,
    }
}

/// One `VmCriteriaRule` of a dynamic group (stored, not evaluated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct VmCriteriaRule {
    pub attribute_type: String,
    pub attribute_value: String,
    pub operator: String,
}
definition!(VmCriteriaRule, "VmCriteriaRule", serialize);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct VmCriteria {
    pub rules: Option<Vec<VmCriteriaRule>>,
}
definition!(VmCriteria, "VmCriteria", serialize);

/// `FirewallGroupDetails`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct FirewallGroupBody {
    pub id: Option<String>,
    pub name: String,
    pub description: Option<String>,
    pub org_ref: Option<Ref>,
    pub edge_gateway_ref: Option<Ref>,
    pub owner_ref: Option<Ref>,
    pub network_provider_scope: Option<String>,
    /// Read-only: always `REALIZED` on reads.
    pub status: Option<String>,
    #[serde(rename = "type")]
    pub group_type: Option<String>,
    pub type_value: Option<String>,
    pub ip_addresses: Option<Vec<String>>,
    pub members: Option<Vec<Ref>>,
    pub vm_criteria: Option<Vec<VmCriteria>>,
}
definition!(FirewallGroupBody, "FirewallGroupDetails", serialize);

/// A firewall group and the gateway that owns it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirewallGroup {
    pub gateway_id: String,
    pub org_id: String,
    pub body: FirewallGroupBody,
}

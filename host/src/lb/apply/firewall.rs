//! Applying the managed firewall's writes: a Service's IP sets and port
//! profile, then its rule naming them (ids of objects written in the same
//! plan are filled in by name), and their deletes.

use serde_json::Value;

use crate::lb::apply::applier::{Applier, Ids};
use crate::lb::errors::LbError;
use crate::lb::plan::firewall::is_ours;
use crate::lb::plan::op::FirewallOp;
use crate::vcd::reference::EntityRef;
use crate::vcd::resources::firewall::{FirewallRule, ListEdit};

impl Applier<'_> {
    /// Runs one firewall write.
    pub(super) async fn apply_firewall(
        &self,
        op: FirewallOp,
        ids: &mut Ids,
    ) -> Result<(), LbError> {
        let (client, gateway) = (self.client, self.gateway_id);
        match op {
            FirewallOp::WriteGroup(set) => {
                let name = set.name.clone();
                let written = match set.id {
                    Some(_) => client.ip_sets().update(&set).await.map(|()| set),
                    None => client.ip_sets().create(&set).await,
                }
                .map_err(self.failed(format!("writing IP set {name}")))?;
                ids.firewall_groups
                    .insert(name, written.id.unwrap_or_default());
            }
            FirewallOp::WriteProfile(profile) => {
                let written = match profile.id {
                    Some(_) => client.port_profiles().update(&profile).await,
                    None => client.port_profiles().create(&profile).await,
                }
                .map_err(self.failed("writing the firewall port profile".into()))?;
                ids.port_profiles
                    .insert(written.name.clone(), written.id.unwrap_or_default());
            }
            FirewallOp::AddRule { rule, owner } => {
                let body = serde_json::to_value(complete(rule, ids)).unwrap_or(Value::Null);
                let edit = |rules: &[Value]| {
                    let ours =
                        |r: &Value| is_ours(r.get("description").and_then(Value::as_str), &owner);
                    if rules.iter().any(ours) {
                        return ListEdit::Keep;
                    }
                    let mut rules = rules.to_vec();
                    rules.push(body.clone());
                    ListEdit::Replace(rules)
                };
                client
                    .firewall()
                    .edit_user_rules(gateway, edit)
                    .await
                    .map_err(self.failed("adding the Service's gateway firewall rule".into()))?;
            }
            FirewallOp::UpdateRule(rule) => {
                client
                    .firewall()
                    .update(gateway, &complete(rule, ids))
                    .await
                    .map_err(self.failed("updating the Service's gateway firewall rule".into()))?;
            }
            FirewallOp::DeleteRule { id, .. } => client
                .firewall()
                .delete(gateway, &id)
                .await
                .map_err(self.failed("deleting the Service's gateway firewall rule".into()))?,
            FirewallOp::DeleteGroup { id, name } => client
                .ip_sets()
                .delete(gateway, &id)
                .await
                .map_err(self.failed(format!("deleting IP set {name}")))?,
            FirewallOp::DeleteProfile { id, name } => client
                .port_profiles()
                .delete(&id)
                .await
                .map_err(self.failed(format!("deleting port profile {name}")))?,
        }
        Ok(())
    }
}

/// The rule with the ids of the groups and profile written in this plan.
fn complete(mut rule: FirewallRule, ids: &Ids) -> FirewallRule {
    let fill = |reference: &mut EntityRef, written: &std::collections::HashMap<String, String>| {
        if reference.id.is_empty()
            && let Some(id) = reference.name.as_ref().and_then(|n| written.get(n))
        {
            reference.id.clone_from(id);
        }
    };
    for group in rule
        .source_firewall_groups
        .iter_mut()
        .chain(rule.destination_firewall_groups.iter_mut())
    {
        fill(group, &ids.firewall_groups);
    }
    for profile in &mut rule.application_port_profiles {
        fill(profile, &ids.port_profiles);
    }
    rule
}

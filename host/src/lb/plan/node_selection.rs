//! Per-Service node sets (contract 0.4.0, `decision.node-selector`): the
//! Nodes that serve a Service are the eligible ones that meet its
//! selector. Services with the same selector share one IP set; when no
//! Node meets it, the pools keep the members they have and the Service
//! gets a Warning.

use std::collections::HashSet;

use crate::lb::observe::objects::ServiceObjects;
use crate::lb::plan::desired::DesiredPort;
use crate::lb::plan::objects::retag_pool;
use crate::lb::service::NodeSpec;
use crate::policy::model::NodeRequirement;
use crate::vcd::{VcdClient, VcdError};

/// The Nodes a decision's selector leaves.
#[derive(Debug)]
pub struct Selection {
    /// The Nodes that serve the Service.
    pub nodes: Vec<NodeSpec>,
    /// The selector in Kubernetes' syntax, requirements and values
    /// sorted, so equal selectors read the same; `None` without one.
    pub selector: Option<String>,
    /// Nodes were eligible but none meets the selector: the pools keep
    /// the members they have.
    pub none_matched: bool,
}

impl Selection {
    /// The eligible `nodes` that meet `selector` (all of them when it is empty).
    pub fn of(nodes: &[NodeSpec], selector: &[NodeRequirement]) -> Self {
        if selector.is_empty() {
            return Self {
                nodes: nodes.to_vec(),
                selector: None,
                none_matched: false,
            };
        }
        let mut requirements: Vec<NodeRequirement> = selector.to_vec();
        for requirement in &mut requirements {
            requirement.values.sort();
            requirement.values.dedup();
        }
        requirements.sort();
        requirements.dedup();
        let selected: Vec<NodeSpec> = nodes
            .iter()
            .filter(|n| requirements.iter().all(|r| r.matches(&n.labels)))
            .cloned()
            .collect();
        let text: Vec<String> = requirements.iter().map(ToString::to_string).collect();
        Self {
            none_matched: selected.is_empty() && !nodes.is_empty(),
            nodes: selected,
            selector: Some(text.join(",")),
        }
    }

    /// The Warning of a selector no Node meets.
    pub fn warning(&self) -> Option<String> {
        let selector = self.selector.as_deref().filter(|_| self.none_matched)?;
        Some(format!(
            "the node selector {:?} matches no eligible Node, so the load balancer keeps the Nodes it has; label the Nodes that should serve this Service, or change the selector",
            crate::text::sanitize(selector, 300)
        ))
    }
}

/// Pools that list their members keep those they have: each desired pool
/// takes the members its live pool lists (one read per pool).
pub async fn keep_listed(
    client: &VcdClient,
    desired: &mut [DesiredPort],
    observed: &ServiceObjects,
) -> Result<(), VcdError> {
    for port in desired.iter_mut() {
        let pool = &mut port.pool;
        let Some(seen) = observed.pools.get(&pool.name) else {
            continue;
        };
        let held = client.pools().get(&seen.object.id).await?;
        let port_number = pool.default_port;
        let mut seen_ips = HashSet::new();
        pool.members = held
            .members
            .into_iter()
            .filter(|m| seen_ips.insert(m.ip_address.clone()))
            .map(|m| crate::vcd::resources::pool::PoolMember {
                port: port_number.or(m.port),
                ..m
            })
            .collect();
        retag_pool(pool, "");
    }
    Ok(())
}

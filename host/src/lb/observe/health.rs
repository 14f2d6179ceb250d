//! Health read-back: what VCD says of each Service's pools (how many
//! members are enabled and up, and its words when they are not), from one
//! paged list of the gateway's pool summaries, whatever the number of
//! Services.

use std::collections::HashMap;

use crate::lb::errors::LbError;
use crate::lb::ownership::{ClusterIdentity, OwnerTag};
use crate::vcd::VcdClient;
use crate::vcd::errors::vcd_text;
use crate::vcd::resources::pool::PoolSummary;

/// What VCD says of one Service's pools together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolHealth {
    /// Pools of the Service found on the gateway.
    pub pools: u32,
    /// Enabled members over all of them.
    pub enabled: u32,
    /// Enabled members VCD finds operational.
    pub up: u32,
    /// Pools whose health VCD does not know yet (`UNKNOWN`, or not given).
    pub unknown: u32,
    /// VCD's message on a pool that is not up, if it gave one.
    pub message: Option<String>,
}

impl PoolHealth {
    fn add(&mut self, pool: &PoolSummary) {
        self.pools += 1;
        self.enabled += pool.enabled_member_count.unwrap_or(0);
        self.up += pool.up_member_count.unwrap_or(0);
        let status = pool.health_status.as_deref().unwrap_or("UNKNOWN");
        if status == "UNKNOWN" {
            self.unknown += 1;
        }
        if status != "UP"
            && self.message.is_none()
            && let Some(message) = pool.health_message.as_deref().filter(|m| !m.is_empty())
        {
            self.message = Some(vcd_text(message));
        }
    }
}

/// The health of every Service of this cluster (`cluster_id`, and
/// `identity` where the tag records one) that has pools on the gateway,
/// by Service uid.
pub(in crate::lb) async fn read(
    client: &VcdClient,
    gateway_id: &str,
    cluster_id: &str,
    identity: &ClusterIdentity,
) -> Result<HashMap<String, PoolHealth>, LbError> {
    let pools = client
        .pools()
        .summaries(gateway_id)
        .await
        .map_err(LbError::vcd(
            "(health)",
            "reading the gateway's pool summaries".into(),
        ))?;
    let mut health: HashMap<String, PoolHealth> = HashMap::new();
    for pool in &pools {
        let Some(tagged) = pool.description.as_deref().and_then(OwnerTag::parse) else {
            continue;
        };
        let owner = tagged.owner;
        let ours = owner.cluster_id == cluster_id
            && owner
                .identity
                .as_deref()
                .is_none_or(|i| i == identity.as_str());
        if ours {
            health.entry(owner.uid).or_default().add(pool);
        }
    }
    Ok(health)
}

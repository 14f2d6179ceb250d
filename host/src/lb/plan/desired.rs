//! What a plan wants of one Service port in VCD.

use crate::lb::plan::http_rules::RuleSet;
use crate::vcd::resources::health_monitor::TenantMonitor;
use crate::vcd::resources::nat::NatRule;
use crate::vcd::resources::pool::Pool;
use crate::vcd::resources::virtual_service::VirtualService;

/// The objects of one Service port.
#[derive(Debug, Clone)]
pub struct DesiredPort {
    pub pool: Pool,
    /// The tenant monitors the pool wants (API 39.0+), which its body
    /// lists without their ids.
    pub monitors: Vec<TenantMonitor>,
    pub virtual_service: VirtualService,
    /// The virtual service's HTTP rules; its tag records their digests.
    pub rules: RuleSet,
    /// How long a leaving node's member stays, disabled, before removal.
    pub drain_seconds: u32,
    pub dnat: Option<NatRule>,
}

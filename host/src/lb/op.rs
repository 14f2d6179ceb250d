//! One write to VCD, as plans list them and the applier runs them: deletes
//! first (NAT, virtual services, pools), then pools, virtual services and
//! their HTTP rules, and NAT rules last.

use crate::vcd::resources::http_policy::RuleList;
use crate::vcd::resources::nat::NatRule;
use crate::vcd::resources::pool::Pool;
use crate::vcd::resources::virtual_service::VirtualService;

/// One write, in the order plans return them.
#[derive(Debug, Clone)]
pub enum Op {
    DeleteNat {
        id: String,
        name: String,
    },
    DeleteVirtualService {
        id: String,
        name: String,
    },
    DeletePool {
        id: String,
        name: String,
    },
    UpdatePool {
        id: String,
        pool: Pool,
    },
    CreatePool(Pool),
    UpdateVirtualService {
        id: String,
        vs: VirtualService,
    },
    CreateVirtualService(VirtualService),
    /// Replaces one of the HTTP rule lists of the virtual service named `vs`.
    PutHttpRules {
        vs: String,
        rules: RuleList,
    },
    /// Writes the virtual service again once its rule lists are written,
    /// its tag now recording them; `id` is `None` for one created in the
    /// same plan.
    RecordVirtualService {
        id: Option<String>,
        vs: VirtualService,
    },
    UpdateNat {
        id: String,
        rule: NatRule,
    },
    CreateNat(NatRule),
}

impl Op {
    /// What the write does, for Events: `created pool <name>`, ….
    pub fn describe(&self) -> String {
        match self {
            Op::DeleteNat { name, .. } => format!("deleted NAT rule {name}"),
            Op::DeleteVirtualService { name, .. } => format!("deleted virtual service {name}"),
            Op::DeletePool { name, .. } => format!("deleted pool {name}"),
            Op::UpdatePool { pool, .. } => format!("updated pool {}", pool.name),
            Op::CreatePool(pool) => format!("created pool {}", pool.name),
            Op::UpdateVirtualService { vs, .. } => format!("updated virtual service {}", vs.name),
            Op::CreateVirtualService(vs) => format!("created virtual service {}", vs.name),
            Op::PutHttpRules { vs, rules } => {
                format!("wrote {} of virtual service {vs}", rules.kind().segment())
            }
            Op::RecordVirtualService { vs, .. } => {
                format!("recorded the HTTP rules in virtual service {}", vs.name)
            }
            Op::UpdateNat { rule, .. } => format!("updated NAT rule {}", rule.name),
            Op::CreateNat(rule) => format!("created NAT rule {}", rule.name),
        }
    }

    pub(super) fn rank(&self) -> u8 {
        match self {
            Op::DeleteNat { .. } => 0,
            Op::DeleteVirtualService { .. } => 1,
            Op::DeletePool { .. } => 2,
            Op::UpdatePool { .. } => 3,
            Op::CreatePool(_) => 4,
            Op::UpdateVirtualService { .. } => 5,
            Op::CreateVirtualService(_) => 6,
            Op::PutHttpRules { .. } => 7,
            Op::RecordVirtualService { .. } => 8,
            Op::UpdateNat { .. } => 9,
            Op::CreateNat(_) => 10,
        }
    }
}

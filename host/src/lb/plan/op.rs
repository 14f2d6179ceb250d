//! One write to VCD, as plans list them and the applier runs them: the
//! Service's address allocated or claimed (applied on its own, before the
//! rest: a refusal there moves the Service to another address), the IP
//! set the pools take their members from first, then deletes (NAT, virtual
//! services, pools), pools, virtual services and their HTTP rules, NAT
//! rules, and a Service's own IP set that no pool uses any more; the
//! managed firewall's IP sets and port profile, its rule, and their
//! deletes, rule first; then the IP Space claims a move or a delete leaves,
//! and the certificate uploads nothing uses any more. A Secret's certificate
//! is uploaded in a step of its own, before all of these.

use std::net::IpAddr;

use crate::lb::ownership::OwnerTag;
use crate::lb::tls::Upload;
use crate::vcd::resources::firewall::FirewallRule;
use crate::vcd::resources::health_monitor::TenantMonitor;
use crate::vcd::resources::http_policy::RuleList;
use crate::vcd::resources::ip_set::IpSet;
use crate::vcd::resources::ipspace::IpAllocation;
use crate::vcd::resources::nat::NatRule;
use crate::vcd::resources::pool::Pool;
use crate::vcd::resources::profiles::PortProfile;
use crate::vcd::resources::virtual_service::VirtualService;

/// A write of the managed gateway firewall, in the order they run: a
/// Service's IP sets and port profile, its rule, then deletes (rule first).
#[derive(Debug, Clone)]
pub enum FirewallOp {
    /// A firewall IP set of the Service (its sources or its addresses),
    /// created (no id) or rewritten.
    WriteGroup(IpSet),
    /// The Service's firewall port profile, created (no id) or rewritten.
    WriteProfile(PortProfile),
    /// Appends the Service's rule to the user-defined rules, unless a rule
    /// with `owner`'s tag is there by then.
    AddRule {
        rule: FirewallRule,
        owner: OwnerTag,
    },
    UpdateRule(FirewallRule),
    DeleteRule {
        id: String,
        name: String,
    },
    DeleteGroup {
        id: String,
        name: String,
    },
    DeleteProfile {
        id: String,
        name: String,
    },
}

/// One write, in the order plans return them.
#[derive(Debug, Clone)]
pub enum Op {
    /// The IP set the pools name as their member group, created (it has
    /// no id) or rewritten.
    WriteIpSet(IpSet),
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
    /// A Service's own IP set its pools no longer use.
    DeleteIpSet {
        id: String,
        name: String,
    },
    /// A write of the managed gateway firewall.
    Firewall(FirewallOp),
    /// A tenant health monitor (API 39.0+), created, or its settings
    /// written back, unless another reconcile made it so meanwhile.
    WriteMonitor(TenantMonitor),
    /// Assigns the monitor named `monitor` to the pool named `pool`.
    AssignMonitor {
        pool: String,
        monitor: String,
    },
    /// A tenant monitor no pool uses, unless a reconcile in progress wants
    /// it or a pool took it meanwhile.
    DeleteMonitor {
        id: String,
        name: String,
    },
    /// A write of an IP Space allocation, once the Service's objects are
    /// written (and its address verified).
    Address(AddressOp),
    /// Deletes an upload of this cluster that nothing uses any more, unless
    /// a reconcile in progress holds it; a failure is logged, not an error
    /// (VCD refuses while a virtual service still uses it: later, then).
    DeleteUpload {
        id: String,
        alias: String,
    },
    /// A TLS Secret's certificate added to the library, unless another
    /// reconcile made that upload meanwhile. Planned alone, before the
    /// rest of a pass, whose virtual services name the id VCD gives it.
    UploadCertificate(Upload),
}

/// A write of an IP Space allocation.
#[derive(Debug, Clone)]
pub enum AddressOp {
    /// Allocates `ip` from the IP Space and claims it with `marker` (the
    /// Service's tag), noted in the allocation journal first: a crash or a
    /// lost answer leaves an allocation the next reconcile finds.
    Allocate {
        space_id: String,
        space_name: String,
        ip: IpAddr,
        marker: String,
        holder: String,
    },
    /// Below API 37.2 the IP Space picks the address: allocated, noted and
    /// claimed, and the Service then decided again with it.
    AllocateAny {
        space_id: String,
        space_name: String,
        marker: String,
        holder: String,
    },
    /// Writes `marker` (an ownership tag) on the allocation: a claim in
    /// this tag format, or one passed on to `holder`, a Service sharing
    /// the address.
    Mark {
        space_id: String,
        allocation: IpAllocation,
        marker: String,
        holder: String,
    },
    /// Returns the allocation to its IP Space.
    Release {
        space_id: String,
        allocation: IpAllocation,
    },
}

/// What a write does to its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// A new object.
    Create,
    /// An object rewritten in place.
    Update,
    /// An object removed.
    Delete,
}

impl Op {
    /// The object written: its kind (as VCD names it), its name, and what
    /// happens to it.
    pub fn target(&self) -> (&'static str, String, Action) {
        let written = |id: &Option<String>| match id {
            Some(_) => Action::Update,
            None => Action::Create,
        };
        match self {
            Op::WriteIpSet(set) => ("ip set", set.name.clone(), written(&set.id)),
            Op::DeleteIpSet { name, .. } => ("ip set", name.clone(), Action::Delete),
            Op::WriteMonitor(m) => ("health monitor", m.name.clone(), written(&m.id)),
            Op::AssignMonitor { pool, monitor } => (
                "health monitor assignment",
                format!("{monitor} to {pool}"),
                Action::Create,
            ),
            Op::DeleteMonitor { name, .. } => ("health monitor", name.clone(), Action::Delete),
            Op::DeleteNat { name, .. } => ("nat rule", name.clone(), Action::Delete),
            Op::DeleteVirtualService { name, .. } => {
                ("virtual service", name.clone(), Action::Delete)
            }
            Op::DeletePool { name, .. } => ("pool", name.clone(), Action::Delete),
            Op::UpdatePool { pool, .. } => ("pool", pool.name.clone(), Action::Update),
            Op::CreatePool(pool) => ("pool", pool.name.clone(), Action::Create),
            Op::UpdateVirtualService { vs, .. } | Op::RecordVirtualService { vs, .. } => {
                ("virtual service", vs.name.clone(), Action::Update)
            }
            Op::CreateVirtualService(vs) => ("virtual service", vs.name.clone(), Action::Create),
            Op::PutHttpRules { vs, rules } => (
                "http rule list",
                format!("{vs}/{}", rules.kind().segment()),
                Action::Update,
            ),
            Op::UpdateNat { rule, .. } => ("nat rule", rule.name.clone(), Action::Update),
            Op::CreateNat(rule) => ("nat rule", rule.name.clone(), Action::Create),
            Op::Firewall(op) => op.target(),
            Op::Address(AddressOp::Mark { allocation, .. }) => (
                "ip space allocation",
                allocation.value.clone(),
                Action::Update,
            ),
            Op::Address(AddressOp::Release { allocation, .. }) => (
                "ip space allocation",
                allocation.value.clone(),
                Action::Delete,
            ),
            Op::Address(AddressOp::Allocate { ip, .. }) => {
                ("ip space allocation", ip.to_string(), Action::Create)
            }
            Op::Address(AddressOp::AllocateAny { space_name, .. }) => (
                "ip space allocation",
                format!("(an address of {space_name})"),
                Action::Create,
            ),
            Op::DeleteUpload { alias, .. } => ("certificate", alias.clone(), Action::Delete),
            Op::UploadCertificate(upload) => {
                ("certificate", upload.item.alias.clone(), Action::Create)
            }
        }
    }

    /// What the write does, for Events: `created pool <name>`, ….
    pub fn describe(&self) -> String {
        match self {
            Op::WriteIpSet(set) if set.id.is_none() => format!("created IP set {}", set.name),
            Op::WriteIpSet(set) => format!("updated IP set {}", set.name),
            Op::DeleteIpSet { name, .. } => format!("deleted IP set {name}"),
            Op::WriteMonitor(m) if m.id.is_none() => format!("created health monitor {}", m.name),
            Op::WriteMonitor(m) => format!("updated health monitor {}", m.name),
            Op::AssignMonitor { pool, monitor } => {
                format!("assigned health monitor {monitor} to pool {pool}")
            }
            Op::DeleteMonitor { name, .. } => format!("deleted health monitor {name}"),
            Op::Firewall(op) => op.describe(),
            Op::Address(AddressOp::Mark {
                allocation, holder, ..
            }) => format!(
                "claimed IP Space allocation {} for {holder}",
                allocation.value
            ),
            Op::Address(AddressOp::Release { allocation, .. }) => {
                format!("released IP Space allocation {}", allocation.value)
            }
            Op::Address(AddressOp::Allocate {
                ip,
                space_name,
                holder,
                ..
            }) => format!("allocated {ip} from IP Space {space_name} for {holder}"),
            Op::Address(AddressOp::AllocateAny {
                space_name, holder, ..
            }) => format!("allocated an address from IP Space {space_name} for {holder}"),
            Op::DeleteUpload { alias, .. } => format!("deleted certificate upload {alias}"),
            Op::UploadCertificate(upload) => format!(
                "uploaded Secret {} as certificate {}",
                upload.secret, upload.item.alias
            ),
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

    pub(in crate::lb) fn rank(&self) -> u8 {
        match self {
            Op::UploadCertificate(_) | Op::WriteIpSet(_) | Op::WriteMonitor(_) => 0,
            Op::DeleteNat { .. } => 1,
            Op::DeleteVirtualService { .. } => 2,
            Op::DeletePool { .. } => 3,
            Op::UpdatePool { .. } => 4,
            Op::CreatePool(_) | Op::AssignMonitor { .. } => 5,
            Op::UpdateVirtualService { .. } => 6,
            Op::CreateVirtualService(_) => 7,
            Op::PutHttpRules { .. } => 8,
            Op::RecordVirtualService { .. } => 9,
            Op::UpdateNat { .. } => 10,
            Op::CreateNat(_) => 11,
            Op::DeleteIpSet { .. } | Op::DeleteMonitor { .. } => 12,
            Op::Firewall(op) => op.rank(),
            Op::Address(_) => 19,
            Op::DeleteUpload { .. } => 20,
        }
    }
}

impl FirewallOp {
    fn target(&self) -> (&'static str, String, Action) {
        let written = |id: &Option<String>| match id {
            Some(_) => Action::Update,
            None => Action::Create,
        };
        match self {
            FirewallOp::WriteGroup(set) => ("firewall ip set", set.name.clone(), written(&set.id)),
            FirewallOp::WriteProfile(profile) => {
                ("port profile", profile.name.clone(), written(&profile.id))
            }
            FirewallOp::AddRule { rule, .. } => {
                ("firewall rule", rule.name.clone(), Action::Create)
            }
            FirewallOp::UpdateRule(rule) => ("firewall rule", rule.name.clone(), Action::Update),
            FirewallOp::DeleteRule { name, .. } => ("firewall rule", name.clone(), Action::Delete),
            FirewallOp::DeleteGroup { name, .. } => {
                ("firewall ip set", name.clone(), Action::Delete)
            }
            FirewallOp::DeleteProfile { name, .. } => {
                ("port profile", name.clone(), Action::Delete)
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            FirewallOp::DeleteGroup { name, .. } => format!("deleted IP set {name}"),
            FirewallOp::WriteGroup(set) if set.id.is_none() => {
                format!("created IP set {}", set.name)
            }
            FirewallOp::WriteGroup(set) => format!("updated IP set {}", set.name),
            FirewallOp::WriteProfile(profile) if profile.id.is_none() => {
                format!("created port profile {}", profile.name)
            }
            FirewallOp::WriteProfile(profile) => format!("updated port profile {}", profile.name),
            FirewallOp::AddRule { rule, .. } => format!("added firewall rule {}", rule.name),
            FirewallOp::UpdateRule(rule) => format!("updated firewall rule {}", rule.name),
            FirewallOp::DeleteRule { name, .. } => format!("deleted firewall rule {name}"),
            FirewallOp::DeleteProfile { name, .. } => format!("deleted port profile {name}"),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            FirewallOp::WriteGroup(_) => 13,
            FirewallOp::WriteProfile(_) => 14,
            FirewallOp::AddRule { .. } | FirewallOp::UpdateRule(_) => 15,
            FirewallOp::DeleteRule { .. } => 16,
            FirewallOp::DeleteGroup { .. } => 17,
            FirewallOp::DeleteProfile { .. } => 18,
        }
    }
}

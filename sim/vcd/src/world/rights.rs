//! The rights of the predefined roles, by VCD's names for them (the names a
//! role editor and `GET /cloudapi/1.0.0/roles/{id}/rights` show). vcdsim
//! lists only the rights of what it models: the networking, load-balancer,
//! certificate, IP Space and CAPVCD entity rights a cloud provider's role
//! holds. A scenario's `roles` replace these for a role name.

/// What `Organization Administrator` (and, in vcdsim, `System
/// Administrator`) holds of the modelled rights.
pub const ADMINISTRATOR: &[&str] = &[
    "API Tokens: Manage",
    "Certificate Library: Manage",
    "Certificate Library: View",
    "IP Spaces: Allocate",
    "Organization vDC Gateway: Configure Firewall",
    "Organization vDC Gateway: Configure Load Balancer",
    "Organization vDC Gateway: Configure NAT",
    "Organization vDC Gateway: View",
    "Organization vDC Gateway: View Firewall",
    "Organization vDC Gateway: View Load Balancer",
    "Organization vDC Gateway: View NAT",
    "Organization vDC Network: View Properties",
    "Organization vDC: View",
    "Organization: View",
    "Private IP Spaces: Manage",
    "Private IP Spaces: View",
    "vmware:capvcdCluster: Full Access",
    "vmware:capvcdCluster: Modify",
    "vmware:capvcdCluster: View",
];

/// The predefined roles vcdsim knows.
const PREDEFINED: &[&str] = &["Organization Administrator", "System Administrator"];

/// The rights of a role no scenario defines: a predefined role's, else none
/// (a custom role holds only what it is given).
pub fn of_unlisted_role(name: &str) -> Vec<String> {
    if PREDEFINED.contains(&name) {
        ADMINISTRATOR.iter().map(|r| r.to_string()).collect()
    } else {
        Vec::new()
    }
}

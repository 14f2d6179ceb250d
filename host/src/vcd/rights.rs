//! The VCD rights the CCM's calls need, by VCD's names for them (the names
//! a role editor and `GET /cloudapi/1.0.0/roles/{id}/rights` show). The
//! list follows the calls of [`resources`](super::resources): what each
//! right is for says which calls need it. Reading VMs and vApps needs no
//! right of its own (VCD's refusal names the `[Base]` rights every org
//! member holds), nor do the org and VDC lookups.

/// A right and what the CCM does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Right {
    /// VCD's name for the right.
    pub name: &'static str,
    /// What the CCM does with it.
    pub used_for: &'static str,
}

/// Reading the edge gateway and the addresses it uses.
pub const GATEWAY_VIEW: Right = Right {
    name: "Organization vDC Gateway: View",
    used_for: "read the edge gateway and the addresses it uses",
};
/// Finding `loadbalancer.network`.
pub const NETWORK_VIEW: Right = Right {
    name: "Organization vDC Network: View Properties",
    used_for: "find loadbalancer.network",
};
/// Reading the gateway's ALB settings, service engine groups, pools and
/// virtual services.
pub const LOAD_BALANCER_VIEW: Right = Right {
    name: "Organization vDC Gateway: View Load Balancer",
    used_for: "read the gateway's load balancer, service engine groups, pools and virtual services",
};
/// Creating, changing and deleting pools and virtual services.
pub const LOAD_BALANCER_CONFIGURE: Right = Right {
    name: "Organization vDC Gateway: Configure Load Balancer",
    used_for: "create, change and delete pools and virtual services",
};
/// Reading NAT rules (every gateway read includes them).
pub const NAT_VIEW: Right = Right {
    name: "Organization vDC Gateway: View NAT",
    used_for: "read the gateway's NAT rules",
};
/// One-arm modes: DNAT rules.
pub const NAT_CONFIGURE: Right = Right {
    name: "Organization vDC Gateway: Configure NAT",
    used_for: "create, change and delete DNAT rules (loadbalancer.oneArm)",
};
/// IP sets of pool members (API 37.1+) and `loadbalancer.manageFirewall`:
/// reading the gateway's firewall groups and rules.
pub const FIREWALL_VIEW: Right = Right {
    name: "Organization vDC Gateway: View Firewall",
    used_for: "read the IP sets pools take their members from (API 37.1+) and the gateway firewall (loadbalancer.manageFirewall)",
};
/// IP sets of pool members (API 37.1+) and `loadbalancer.manageFirewall`:
/// IP sets, rules and port profiles.
pub const FIREWALL_CONFIGURE: Right = Right {
    name: "Organization vDC Gateway: Configure Firewall",
    used_for: "write the IP sets pools take their members from (API 37.1+), and firewall rules and port profiles (loadbalancer.manageFirewall)",
};
/// Reading the certificate library (`certAlias`, aliases Services name).
pub const CERTIFICATES_VIEW: Right = Right {
    name: "Certificate Library: View",
    used_for: "find certAlias and the certificates Services name",
};
/// Uploading and deleting the certificates of `vcd-ccm.io/tls-secret`.
pub const CERTIFICATES_MANAGE: Right = Right {
    name: "Certificate Library: Manage",
    used_for: "upload and delete the certificates of Services annotated vcd-ccm.io/tls-secret",
};
/// IP Space gateways: allocating and releasing floating IPs. With the two
/// below, the set VMware's Container Service Extension 4.2 documents for
/// the upstream CCM's IP Space support.
pub const IP_SPACES_ALLOCATE: Right = Right {
    name: "IP Spaces: Allocate",
    used_for: "allocate, claim and release floating IPs (IP Space gateways)",
};
/// IP Space gateways: reading the spaces.
pub const PRIVATE_IP_SPACES_VIEW: Right = Right {
    name: "Private IP Spaces: View",
    used_for: "read the IP Spaces and their allocations (IP Space gateways)",
};
/// IP Space gateways: changing allocations.
pub const PRIVATE_IP_SPACES_MANAGE: Right = Right {
    name: "Private IP Spaces: Manage",
    used_for: "mark allocations used by a Service (IP Space gateways)",
};
/// A `clusterid` naming a CAPVCD cluster entity: reading it.
pub const CAPVCD_VIEW: Right = Right {
    name: "vmware:capvcdCluster: View",
    used_for: "read the cluster's RDE (clusterid names one)",
};
/// A `clusterid` naming a CAPVCD cluster entity: writing `status.cpi`.
pub const CAPVCD_MODIFY: Right = Right {
    name: "vmware:capvcdCluster: Modify",
    used_for: "write the load balancers into the cluster RDE's status.cpi",
};

/// What the configuration and the gateway turn on, which decides the
/// rights needed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uses {
    /// `loadbalancer.enabled`.
    pub load_balancers: bool,
    /// `loadbalancer.oneArm`: DNAT rules.
    pub nat: bool,
    /// `loadbalancer.manageFirewall`.
    pub firewall: bool,
    /// Pools take their members from IP sets (API 37.1+).
    pub member_groups: bool,
    /// The gateway takes its addresses from IP Spaces.
    pub ip_spaces: bool,
    /// `clusterid` names a runtime defined entity.
    pub rde: bool,
}

impl Uses {
    /// Every right the CCM's calls need with these settings.
    pub fn required(&self) -> Vec<Right> {
        if !self.load_balancers {
            return Vec::new();
        }
        let mut rights = vec![
            GATEWAY_VIEW,
            NETWORK_VIEW,
            LOAD_BALANCER_VIEW,
            LOAD_BALANCER_CONFIGURE,
            NAT_VIEW,
            CERTIFICATES_VIEW,
        ];
        let conditional = [
            (self.nat, &[NAT_CONFIGURE][..]),
            (
                self.firewall || self.member_groups,
                &[FIREWALL_VIEW, FIREWALL_CONFIGURE][..],
            ),
            (
                self.ip_spaces,
                &[
                    IP_SPACES_ALLOCATE,
                    PRIVATE_IP_SPACES_VIEW,
                    PRIVATE_IP_SPACES_MANAGE,
                ][..],
            ),
            (self.rde, &[CAPVCD_VIEW, CAPVCD_MODIFY][..]),
        ];
        for (used, more) in conditional {
            if used {
                rights.extend_from_slice(more);
            }
        }
        rights
    }

    /// Rights only some Services need: without them those Services fail
    /// and the others are served.
    pub fn optional(&self) -> Vec<Right> {
        if self.load_balancers {
            vec![CERTIFICATES_MANAGE]
        } else {
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_decide_the_rights() {
        assert!(Uses::default().required().is_empty());
        let shared_vip = Uses {
            load_balancers: true,
            ..Uses::default()
        };
        let names: Vec<&str> = shared_vip.required().iter().map(|r| r.name).collect();
        assert!(names.contains(&"Organization vDC Gateway: Configure Load Balancer"));
        assert!(!names.contains(&NAT_CONFIGURE.name));
        let everything = Uses {
            load_balancers: true,
            nat: true,
            firewall: true,
            member_groups: true,
            ip_spaces: true,
            rde: true,
        };
        assert_eq!(everything.required().len(), 14);
        assert_eq!(everything.optional(), vec![CERTIFICATES_MANAGE]);
    }
}

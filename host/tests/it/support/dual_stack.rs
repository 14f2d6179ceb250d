//! Gateways with IPv4 and IPv6 addresses: on sub-allocated subnets of both
//! families, and on an IPv4 and an IPv6 IP Space.

use vcdsim::Scenario;

const HEADER: &str = "systemUsers:
  - {name: admin, password: admin-password, apiTokens: [system-api-token-0123456789abcdef]}
serviceEngineGroups:
  - {name: seg1, reservationType: SHARED}
";

const ORG: &str = "orgs:
  - name: org1
    users:
      - {name: k8s-cpi, password: k8s-cpi-password, apiTokens: [org1-api-token-0123456789abcdef]}
    vdcs:
      - name: vdc1
        networks: [{name: net1, gateway: edge1, cidr: 10.0.0.1/24, ranges: [\"10.0.0.10-10.0.0.200\"]}]
";

/// edge1 on an IPv4 and an IPv6 subnet (30 usable IPv4 and 48 IPv6
/// addresses: the first of each range is the gateway's primary address).
pub fn blocks() -> Scenario {
    let yaml = format!(
        "{HEADER}{ORG}    edgeGateways:
      - name: edge1
        vdc: vdc1
        subnets:
          - {{cidr: 203.0.113.1/24, primaryIp: 203.0.113.10, ranges: [\"203.0.113.10-203.0.113.40\"]}}
          - {{cidr: \"2001:db8:1::1/64\", primaryIp: \"2001:db8:1::10\", ranges: [\"2001:db8:1::10-2001:db8:1::40\"]}}
        loadBalancer: {{ipv6ServiceNetworkDefinition: \"fd00:ffff::1/64\"}}
        serviceEngineGroups: [{{name: seg1, maxVirtualServices: 50}}]
"
    );
    Scenario::from_yaml(&yaml).expect("the dual-stack blocks scenario parses")
}

/// edge1 on the IP Spaces public4 (192.0.2.10-29) and public6
/// (2001:db8:6::10-29), quota 10 each.
pub fn spaces() -> Scenario {
    let yaml = format!(
        "{HEADER}ipSpaces:
  - name: public4
    type: PUBLIC
    ranges: [\"192.0.2.10-192.0.2.29\"]
    internalScope: [\"192.0.2.0/24\"]
    externalScope: 0.0.0.0/0
    defaultFloatingIpQuota: 10
  - name: public6
    type: PUBLIC
    ranges: [\"2001:db8:6::10-2001:db8:6::29\"]
    internalScope: [\"2001:db8:6::/64\"]
    externalScope: \"::/0\"
    defaultFloatingIpQuota: 10
{ORG}    edgeGateways:
      - name: edge1
        vdc: vdc1
        ipSpaces: [public4, public6]
        loadBalancer: {{ipv6ServiceNetworkDefinition: \"fd00:ffff::1/64\"}}
        serviceEngineGroups: [{{name: seg1, maxVirtualServices: 50}}]
"
    );
    Scenario::from_yaml(&yaml).expect("the dual-stack IP Space scenario parses")
}

/// The VIPs (IPv4, IPv6) of the virtual services tagged for `uid`.
pub fn vips_of(sim: &vcdsim::Sim, uid: &str) -> Vec<(Option<String>, Option<String>)> {
    let needle = format!(" uid={uid}");
    sim.with_world(|w| {
        w.virtual_services
            .iter()
            .filter(|vs| {
                vs.description
                    .as_deref()
                    .is_some_and(|d| d.contains(&needle))
            })
            .map(|vs| {
                (
                    vs.virtual_ip_address.clone(),
                    vs.ipv6_virtual_ip_address.clone(),
                )
            })
            .collect()
    })
}

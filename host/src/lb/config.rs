//! The load balancer's settings, named after the upstream cloud-config
//! keys, and the mode they select.

use std::net::{IpAddr, Ipv4Addr};

use crate::lb::ranges::{AddressRange, Ipv4Range};

/// Settings the load balancer cannot work with; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidLbConfig(pub String);

/// Upstream `loadbalancer.oneArm`: the internal VIP range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneArm {
    /// `startIP`: the first internal VIP.
    pub start_ip: String,
    /// `endIP`: the last internal VIP, included.
    pub end_ip: String,
}

/// The load balancer's settings from the cloud config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbConfig {
    /// `clusterid`: the CAPVCD RDE id (or `NO_RDE_…`); part of every
    /// ownership tag and name.
    pub cluster_id: String,
    /// `vcd.vdc`: the cluster's VDC (name or URN).
    pub vdc: String,
    /// `loadbalancer.network`: the org VDC network whose gateway hosts the LBs.
    pub network: String,
    /// `loadbalancer.enableVirtualServiceSharedIP`.
    pub enable_virtual_service_shared_ip: bool,
    /// `loadbalancer.oneArm`.
    pub one_arm: Option<OneArm>,
    /// `loadbalancer.vipSubnet`: limits IP-block addresses to this range.
    pub vip_subnet: Option<Ipv4Range>,
    /// `loadbalancer.certAlias`; `None` means `<clusterid>-cert`.
    pub cert_alias: Option<String>,
    /// `loadbalancer.manageFirewall` (ours, default off): an allow rule per
    /// Service on the gateway firewall, from its source ranges.
    pub manage_firewall: bool,
    /// `loadbalancer.internal.ranges` (ours): the ends of each range of
    /// internal addresses, as written.
    pub internal: Vec<(IpAddr, IpAddr)>,
    /// `loadbalancer.internal.ipSpace` (ours): a PRIVATE IP Space of the org
    /// whose floating IPs are internal addresses.
    pub internal_space: Option<String>,
    /// `loadbalancer.claimUnusedAllocations` (ours, default off): a Service
    /// requesting an address of an IP Space allocation the org made and
    /// neither claimed nor used takes it, rather than leaving it as someone's
    /// reservation.
    pub claim_unused_allocations: bool,
    /// `loadbalancer.kubeProxyHealthCheck` (ours, default off; API 39.0+):
    /// pools of Services that are not `Local` probe kube-proxy's
    /// `:10256/healthz`, so a Node being drained or deleted stops getting
    /// new connections.
    pub kube_proxy_health_check: bool,
}

/// How a Service is exposed (DESIGN.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One external VIP shared by one virtual service per port; no NAT.
    SharedVip,
    /// One internal VIP shared by the ports, a DNAT rule per port.
    SharedVipOneArm(Ipv4Range),
    /// An internal VIP per port, a DNAT rule per port (upstream's default).
    OneArm(Ipv4Range),
}

impl Mode {
    pub(crate) fn uses_nat(self) -> bool {
        !matches!(self, Mode::SharedVip)
    }

    pub(crate) fn internal_range(self) -> Option<Ipv4Range> {
        match self {
            Mode::SharedVip => None,
            Mode::SharedVipOneArm(range) | Mode::OneArm(range) => Some(range),
        }
    }
}

fn parse_ip(key: &str, text: &str) -> Result<Ipv4Addr, InvalidLbConfig> {
    text.trim()
        .parse()
        .map_err(|_| InvalidLbConfig(format!("{key}: {text:?} is not an IPv4 address")))
}

impl LbConfig {
    /// Settings with upstream's defaults for the other keys: shared IP on,
    /// no `oneArm`, no `vipSubnet`, the default certificate alias.
    pub fn new(cluster_id: &str, vdc: &str, network: &str) -> Self {
        Self {
            cluster_id: cluster_id.to_string(),
            vdc: vdc.to_string(),
            network: network.to_string(),
            enable_virtual_service_shared_ip: true,
            one_arm: None,
            vip_subnet: None,
            cert_alias: None,
            manage_firewall: false,
            internal: Vec::new(),
            internal_space: None,
            claim_unused_allocations: false,
            kube_proxy_health_check: false,
        }
    }

    /// The mode these settings select; the upstream rule applies: without
    /// the shared IP feature, `oneArm` is required.
    pub fn mode(&self) -> Result<Mode, InvalidLbConfig> {
        let range = match &self.one_arm {
            None => None,
            Some(one_arm) => {
                let first = parse_ip("loadbalancer.oneArm.startIP", &one_arm.start_ip)?;
                let last = parse_ip("loadbalancer.oneArm.endIP", &one_arm.end_ip)?;
                if first > last {
                    return Err(InvalidLbConfig(format!(
                        "loadbalancer.oneArm: startIP {first} is after endIP {last}"
                    )));
                }
                Some(Ipv4Range { first, last })
            }
        };
        match (self.enable_virtual_service_shared_ip, range) {
            (true, None) => Ok(Mode::SharedVip),
            (true, Some(range)) => Ok(Mode::SharedVipOneArm(range)),
            (false, Some(range)) => Ok(Mode::OneArm(range)),
            (false, None) => Err(InvalidLbConfig(
                "without loadbalancer.enableVirtualServiceSharedIP, loadbalancer.oneArm (startIP, endIP) must be set".to_string(),
            )),
        }
    }

    /// Where internal addresses come from: `loadbalancer.internal.ranges`,
    /// else in one-arm modes the one-arm range (empty: no internal pool).
    pub fn internal_ranges(&self) -> Result<Vec<AddressRange>, InvalidLbConfig> {
        let mut ranges = Vec::with_capacity(self.internal.len());
        for (i, (first, last)) in self.internal.iter().enumerate() {
            let range = AddressRange::new(*first, *last).ok_or_else(|| {
                InvalidLbConfig(format!(
                    "loadbalancer.internal.ranges[{i}]: startIP {first} and endIP {last} must be of one family, the start not after the end"
                ))
            })?;
            if let Some(j) = ranges
                .iter()
                .position(|r: &AddressRange| r.overlaps(&range))
            {
                return Err(InvalidLbConfig(format!(
                    "loadbalancer.internal.ranges[{i}] overlaps ranges[{j}]; give each address once"
                )));
            }
            ranges.push(range);
        }
        if ranges.is_empty()
            && let Some(range) = self.mode()?.internal_range()
        {
            ranges.push(range.into());
        }
        Ok(ranges)
    }

    /// The certificate alias for TLS ports that name none.
    pub fn effective_cert_alias(&self) -> String {
        match self.cert_alias.as_deref().map(str::trim) {
            Some(alias) if !alias.is_empty() => alias.to_string(),
            _ => format!("{}-cert", self.cluster_id),
        }
    }

    /// The default policy's settings carrying `certAlias`.
    pub fn default_policy_config(&self) -> String {
        serde_json::json!({"certAlias": self.effective_cert_alias()}).to_string()
    }

    /// The mode, or what makes these settings unusable.
    pub fn check(&self) -> Result<Mode, InvalidLbConfig> {
        if self.cluster_id.contains(char::is_whitespace) {
            return Err(InvalidLbConfig(
                "clusterid must contain no spaces (it is part of every ownership tag)".to_string(),
            ));
        }
        if self.network.trim().is_empty() {
            return Err(InvalidLbConfig(
                "loadbalancer.network must be set".to_string(),
            ));
        }
        self.internal_ranges()?;
        if self.internal_space.as_deref().is_some_and(str::is_empty) {
            return Err(InvalidLbConfig(
                "loadbalancer.internal.ipSpace is empty: name a PRIVATE IP Space of the org, or leave the key out".to_string(),
            ));
        }
        self.mode()
    }

    /// Whether these settings can work on a gateway of this kind: a
    /// distributed-only gateway (`deploymentMode: DISTRIBUTED_ONLY`, VCD
    /// 10.6) has no NAT, which one-arm needs, and no gateway firewall,
    /// which `manageFirewall` writes.
    pub fn check_gateway(
        &self,
        gateway: &str,
        distributed_only: bool,
    ) -> Result<(), InvalidLbConfig> {
        if !distributed_only {
            return Ok(());
        }
        let without = |what: &str, setting: &str, instead: &str| {
            InvalidLbConfig(format!(
                "edge gateway {gateway} has deploymentMode DISTRIBUTED_ONLY, which has no {what}, so {setting} cannot work; {instead}"
            ))
        };
        if self.one_arm.is_some() {
            return Err(without(
                "NAT",
                "loadbalancer.oneArm (a DNAT rule per port)",
                "remove loadbalancer.oneArm and keep loadbalancer.enableVirtualServiceSharedIP: true, so Services are served on the gateway's external addresses without NAT",
            ));
        }
        if self.manage_firewall {
            return Err(without(
                "gateway firewall",
                "loadbalancer.manageFirewall: true",
                "set it to false and enforce Services' source ranges elsewhere (a distributed firewall rule of the VDC group, or NetworkPolicies)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_follow_the_upstream_keys() {
        let mut config = LbConfig::new("c1", "vdc1", "net1");
        assert_eq!(config.check().unwrap(), Mode::SharedVip);
        config.one_arm = Some(OneArm {
            start_ip: "192.168.8.2".into(),
            end_ip: "192.168.8.100".into(),
        });
        assert!(matches!(config.check().unwrap(), Mode::SharedVipOneArm(_)));
        config.enable_virtual_service_shared_ip = false;
        assert!(matches!(config.check().unwrap(), Mode::OneArm(_)));
        config.one_arm = None;
        assert!(config.check().unwrap_err().to_string().contains("oneArm"));
        assert_eq!(config.effective_cert_alias(), "c1-cert");
    }

    #[test]
    fn internal_ranges_are_checked_and_default_to_the_one_arm_range() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        let mut config = LbConfig::new("c1", "vdc1", "net1");
        assert!(config.internal_ranges().unwrap().is_empty());
        config.one_arm = Some(OneArm {
            start_ip: "192.168.8.2".into(),
            end_ip: "192.168.8.100".into(),
        });
        let ranges = config.internal_ranges().unwrap();
        assert_eq!((ranges.len(), ranges[0].first()), (1, ip("192.168.8.2")));
        config.internal = vec![
            (ip("10.20.0.10"), ip("10.20.0.50")),
            (ip("fd00::10"), ip("fd00::ff")),
        ];
        let ranges = config.internal_ranges().unwrap();
        assert_eq!(
            ranges.len(),
            2,
            "the configured ranges replace the one-arm range"
        );
        config.internal.push((ip("10.20.0.1"), ip("fd00::1")));
        let error = config.check().unwrap_err().to_string();
        assert!(
            error.contains("loadbalancer.internal.ranges[2]") && error.contains("one family"),
            "{error}"
        );
        config.internal[2] = (ip("10.20.0.50"), ip("10.20.0.60"));
        let error = config.check().unwrap_err().to_string();
        assert!(error.contains("ranges[2] overlaps ranges[0]"), "{error}");
    }

    #[test]
    fn distributed_only_gateways_refuse_nat_and_firewall_settings() {
        let mut config = LbConfig::new("c1", "vdc1", "net1");
        assert!(config.check_gateway("gw", true).is_ok());
        config.manage_firewall = true;
        assert!(config.check_gateway("gw", false).is_ok());
        let error = config.check_gateway("gw", true).unwrap_err().to_string();
        assert!(
            error.contains("deploymentMode DISTRIBUTED_ONLY")
                && error.contains("loadbalancer.manageFirewall"),
            "{error}"
        );
        config.one_arm = Some(OneArm {
            start_ip: "192.168.8.2".into(),
            end_ip: "192.168.8.100".into(),
        });
        let error = config.check_gateway("gw", true).unwrap_err().to_string();
        assert!(
            error.contains("NAT") && error.contains("loadbalancer.oneArm"),
            "{error}"
        );
    }
}

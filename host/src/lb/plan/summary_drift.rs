//! What of an object the gateway's lists show, compared with its desired
//! form: a hand edit that left the description (and so the spec digest)
//! alone is still found, at no extra read. Only what VCD's summaries carry
//! is compared, and absent values count as VCD's defaults, so an unchanged
//! object never looks changed.

use crate::vcd::resources::nat::NatRule;
use crate::vcd::resources::virtual_service::{ServicePort, VirtualService, VirtualServiceSummary};

/// A port as VCD means it: the range, TLS on or off, and the transport when
/// the list shows it.
fn port_shape(port: &ServicePort) -> (u32, u32, bool, Option<&str>) {
    (
        port.port_start,
        port.port_end.unwrap_or(port.port_start),
        port.ssl_enabled.unwrap_or(false),
        port.transport(),
    )
}

/// Whether listed ports differ from the wanted ones.
fn ports_differ(seen: &[ServicePort], wanted: &[ServicePort]) -> bool {
    seen.len() != wanted.len()
        || seen.iter().zip(wanted).any(|(seen, wanted)| {
            let (seen, wanted) = (port_shape(seen), port_shape(wanted));
            // A list without the transport says nothing about it.
            let transport_differs = seen.3.is_some() && seen.3 != wanted.3;
            seen.0 != wanted.0 || seen.1 != wanted.1 || seen.2 != wanted.2 || transport_differs
        })
}

/// Whether the listed virtual service differs from `desired` in its ports,
/// profile type, certificate or pool.
pub fn virtual_service_changed(seen: &VirtualServiceSummary, desired: &VirtualService) -> bool {
    let ports_differ = ports_differ(&seen.service_ports, &desired.service_ports);
    let profile_differs = seen
        .application_profile_type
        .as_deref()
        .is_some_and(|kind| kind != desired.application_profile.profile_type);
    let certificate_differs = seen.certificate_ref.as_ref().map(|r| r.id.as_str())
        != desired.certificate_ref.as_ref().map(|r| r.id.as_str());
    let pool_differs = seen
        .load_balancer_pool_ref
        .as_ref()
        .and_then(|r| r.name.as_deref())
        .is_some_and(|name| Some(name) != desired.load_balancer_pool_ref.name.as_deref());
    // A group is compared only where the decision names one: otherwise the
    // virtual service stays where it runs.
    let group_differs = desired
        .service_engine_group_ref
        .name
        .as_deref()
        .is_some_and(|wanted| {
            seen.service_engine_group_ref
                .as_ref()
                .and_then(|r| r.name.as_deref())
                != Some(wanted)
        });
    ports_differ || profile_differs || certificate_differs || pool_differs || group_differs
}

/// Whether the listed NAT rule translates other than `desired` does, or
/// was disabled.
pub fn nat_rule_changed(seen: &NatRule, desired: &NatRule) -> bool {
    seen.enabled != desired.enabled
        || seen.external_addresses != desired.external_addresses
        || seen.internal_addresses != desired.internal_addresses
        || seen.dnat_external_port != desired.dnat_external_port
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn port(start: u32, end: Option<u32>, ssl: Option<bool>, udp: Option<bool>) -> ServicePort {
        let mut extra = serde_json::Map::new();
        if let Some(udp) = udp {
            let kind = if udp { "UDP_FAST_PATH" } else { "TCP_PROXY" };
            extra.insert("tcpUdpProfile".into(), json!({"type": kind}));
        }
        ServicePort {
            port_start: start,
            port_end: end,
            ssl_enabled: ssl,
            extra,
        }
    }

    #[test]
    fn absent_values_are_vcds_defaults_and_a_changed_port_shows() {
        let wanted = [port(80, Some(80), Some(false), Some(false))];
        assert!(!ports_differ(&[port(80, None, None, None)], &wanted));
        assert!(!ports_differ(&wanted, &wanted));
        assert!(ports_differ(&[port(8080, None, None, None)], &wanted));
        assert!(ports_differ(&[port(80, None, Some(true), None)], &wanted));
        assert!(ports_differ(&[port(80, None, None, Some(true))], &wanted));
        assert!(ports_differ(&[], &wanted));
    }
}

//! What a Service's `spec.ipFamilyPolicy` asks that vcd-ccm cannot give: a
//! load balancer here has one address, from the gateway's IPv4 ranges or
//! IP Spaces. A Service that requires two families is refused before
//! anything is written; one that only prefers two is served with one and
//! told so.

use k8s_openapi::api::core::v1::Service;

/// The Warning of a Service that prefers two families and gets one.
pub const DUAL_STACK_NOT_SERVED: &str = "DualStackNotServed";

/// What can be served of the Service's IP families.
#[derive(Debug, PartialEq, Eq)]
pub enum Families {
    /// Everything it asks.
    Served,
    /// Nothing: the reason, naming the field and what would work.
    Refused(String),
    /// One address where it prefers two: the Warning's message.
    OneOfTwo(String),
}

pub fn families(service: &Service) -> Families {
    let policy = service
        .spec
        .as_ref()
        .and_then(|spec| spec.ip_family_policy.as_deref());
    match policy {
        Some("RequireDualStack") => Families::Refused(
            "spec.ipFamilyPolicy RequireDualStack cannot be met: the load balancer gets one address, from the gateway's IPv4 ranges or IP Spaces, and no IPv6 one; set ipFamilyPolicy to PreferDualStack or SingleStack".to_string(),
        ),
        Some("PreferDualStack") => Families::OneOfTwo(
            "spec.ipFamilyPolicy PreferDualStack: the load balancer has one address; vcd-ccm does not give load balancers IPv6 addresses".to_string(),
        ),
        _ => Families::Served,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_policy(policy: Option<&str>) -> Service {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web"},
            "spec": {"type": "LoadBalancer", "ipFamilyPolicy": policy}
        }))
        .expect("a Service")
    }

    #[test]
    fn only_two_families_are_not_served() {
        assert_eq!(families(&with_policy(None)), Families::Served);
        assert_eq!(
            families(&with_policy(Some("SingleStack"))),
            Families::Served
        );
        assert!(matches!(
            families(&with_policy(Some("RequireDualStack"))),
            Families::Refused(reason) if reason.contains("PreferDualStack or SingleStack")
        ));
        assert!(matches!(
            families(&with_policy(Some("PreferDualStack"))),
            Families::OneOfTwo(_)
        ));
    }
}

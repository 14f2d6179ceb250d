//! The plain inputs and output of the load-balancer API: what the controller
//! extracts from a Kubernetes Service and its node list, and the ingress it
//! writes back. No Kubernetes types on purpose.

use std::collections::BTreeMap;

use crate::lb::errors::LbError;
use crate::lb::source_ranges::{SOURCE_RANGES_ANNOTATION, SourceRange, parse_ranges};
use crate::policy::model::{self, IpFamily, Protocol, TrafficPolicy};

/// One `spec.ports[]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortSpec {
    /// `name`; may be empty on a Service with one port.
    pub name: String,
    /// `protocol`; with `port`, the port's identity in object names.
    pub protocol: Protocol,
    /// `port`: the Service port number.
    pub port: u16,
    /// `None` (or 0 upstream) when the Service allocates no node port.
    pub node_port: Option<u16>,
    /// `appProtocol`, handed to the policy.
    pub app_protocol: Option<String>,
}

/// `spec.ipFamilyPolicy`: how many families the Service asks addresses in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FamilyPolicy {
    /// One, of its first family.
    #[default]
    SingleStack,
    /// Both, or the first alone when the gateway cannot give both.
    PreferDualStack,
    /// Both, or nothing.
    RequireDualStack,
}

impl FamilyPolicy {
    /// The value as Kubernetes spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            FamilyPolicy::SingleStack => "SingleStack",
            FamilyPolicy::PreferDualStack => "PreferDualStack",
            FamilyPolicy::RequireDualStack => "RequireDualStack",
        }
    }
}

/// The parts of a Service the load balancer and its policy read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceSpec {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`: what the ownership tag identifies the Service by;
    /// must be set and contain no spaces.
    pub uid: String,
    /// `metadata.annotations` (policy selection and input).
    pub annotations: BTreeMap<String, String>,
    /// `metadata.labels` (policy input).
    pub labels: BTreeMap<String, String>,
    /// Labels of the Service's namespace (policy selection and input).
    pub namespace_labels: BTreeMap<String, String>,
    /// `spec.ports`.
    pub ports: Vec<PortSpec>,
    /// `status.loadBalancer.ingress[].ip`: the addresses the Service last
    /// reported. When the Service owns nothing in VCD (a takeover or a
    /// create cut short by a crash) they are kept if no one else holds them.
    pub reported_ips: Vec<String>,
    /// `spec.loadBalancerIP`: the address asked for; blank counts as unset.
    pub load_balancer_ip: Option<String>,
    /// `spec.loadBalancerClass` (policy selection and input).
    pub load_balancer_class: Option<String>,
    /// `spec.externalTrafficPolicy`.
    pub external_traffic_policy: TrafficPolicy,
    /// `spec.healthCheckNodePort` (policy input).
    pub health_check_node_port: Option<u16>,
    /// How many ready endpoints the Service's EndpointSlices list (policy
    /// input). With `externalTrafficPolicy: Local` the controller passes only
    /// the nodes running them as members.
    pub ready_endpoints: u32,
    /// `spec.ipFamilies`.
    pub ip_families: Vec<IpFamily>,
    /// `spec.ipFamilyPolicy`.
    pub ip_family_policy: FamilyPolicy,
    /// `spec.loadBalancerSourceRanges`, verbatim (checked by the load balancer).
    pub source_ranges: Vec<String>,
    /// `spec.sessionAffinity` with its timeout (policy input).
    pub session_affinity: model::SessionAffinity,
    /// A drift check: also read what the gateway's summaries do not show
    /// (the HTTP rule lists of virtual services that have rules) and
    /// restore what was changed by hand.
    pub read_unsummarised: bool,
}

impl ServiceSpec {
    /// `namespace/name`, for messages.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Who may reach the Service: `spec.loadBalancerSourceRanges`, else the
    /// annotation (comma-separated); empty means anywhere.
    pub fn source_ranges(&self) -> Result<Vec<SourceRange>, LbError> {
        if !self.source_ranges.is_empty() {
            let values: Vec<&str> = self.source_ranges.iter().map(String::as_str).collect();
            return parse_ranges(&self.key(), "spec.loadBalancerSourceRanges", &values);
        }
        match self.annotations.get(SOURCE_RANGES_ANNOTATION) {
            Some(text) => {
                let values: Vec<&str> = text.split(',').filter(|v| !v.trim().is_empty()).collect();
                parse_ranges(&self.key(), SOURCE_RANGES_ANNOTATION, &values)
            }
            None => Ok(Vec::new()),
        }
    }

    /// The Service's first family (`ipFamilies[0]`; IPv4 when unset).
    pub fn first_family(&self) -> IpFamily {
        self.ip_families.first().copied().unwrap_or(IpFamily::Ipv4)
    }

    /// Whether the Service asks for an address of each family.
    pub fn wants_dual_stack(&self) -> bool {
        self.ip_family_policy != FamilyPolicy::SingleStack
    }

    pub(crate) fn check(&self) -> Result<(), crate::lb::errors::LbError> {
        let problem = if self.namespace.is_empty() || self.name.is_empty() {
            Some("namespace and name must be set")
        } else if self.uid.trim().is_empty() || self.uid.contains(char::is_whitespace) {
            Some("uid must be set and contain no spaces (it is part of the ownership tag)")
        } else {
            None
        };
        match problem {
            Some(problem) => Err(crate::lb::errors::LbError::InvalidService {
                service: self.key(),
                problem: problem.to_string(),
            }),
            None => Ok(()),
        }
    }

    pub(crate) fn to_policy(&self) -> (model::Service, model::Namespace) {
        let pairs = |map: &BTreeMap<String, String>| {
            map.iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Vec<_>>()
        };
        let service = model::Service {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
            labels: pairs(&self.labels),
            annotations: pairs(&self.annotations),
            ports: self
                .ports
                .iter()
                .map(|p| model::ServicePort {
                    name: p.name.clone(),
                    protocol: p.protocol,
                    port: p.port,
                    node_port: p.node_port,
                    app_protocol: p.app_protocol.clone(),
                })
                .collect(),
            load_balancer_ip: self
                .load_balancer_ip
                .clone()
                .filter(|ip| !ip.trim().is_empty()),
            load_balancer_class: self.load_balancer_class.clone(),
            external_traffic_policy: self.external_traffic_policy,
            health_check_node_port: self.health_check_node_port,
            ip_families: self.ip_families.clone(),
            // A bad range fails the reconcile before the policy is asked.
            load_balancer_source_ranges: self
                .source_ranges()
                .map(|ranges| ranges.iter().map(ToString::to_string).collect())
                .unwrap_or_default(),
            session_affinity: self.session_affinity,
        };
        let namespace = model::Namespace {
            name: self.namespace.clone(),
            labels: pairs(&self.namespace_labels),
        };
        (service, namespace)
    }
}

/// A node the controller put behind the load balancer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpec {
    /// The Node's `metadata.name`.
    pub name: String,
    /// The node's `InternalIP`; nodes without one receive no traffic.
    pub internal_ip: Option<String>,
    /// The Node's labels, which a decision's node selector reads.
    pub labels: BTreeMap<String, String>,
}

impl NodeSpec {
    /// A node with an `InternalIP` and no labels.
    pub fn new(name: impl Into<String>, internal_ip: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            internal_ip: Some(internal_ip.into()),
            labels: BTreeMap::new(),
        }
    }
}

/// `status.loadBalancer.ingress[].ipMode`: the policy model's, so one
/// type says it from the decision to the status.
pub use crate::policy::model::IpMode;

/// How the decision says the Service's addresses are announced in its
/// status: their mode, and a hostname beside them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Announcement {
    /// `ipMode` of every entry.
    pub ip_mode: IpMode,
    /// `hostname` of every entry.
    pub hostname: Option<String>,
}

/// One `status.loadBalancer.ingress[]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ingress {
    /// `ip`: one of the Service's external addresses.
    pub ip: String,
    /// `ipMode`.
    pub ip_mode: IpMode,
    /// `hostname`: a DNS name for the address, if the decision gives one.
    pub hostname: Option<String>,
}

/// What `status.loadBalancer` should say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LbStatus {
    /// `ingress`: the external addresses, the Service's first family first;
    /// empty while the Service has none.
    pub ingress: Vec<Ingress>,
    /// The policy's warnings about the Service (Events, not status).
    pub warnings: Vec<String>,
    /// What the reconcile wrote to the Service's load-balancer objects
    /// (`created pool …`): empty when VCD already matched the Service.
    pub changes: Vec<String>,
    /// The Service names source ranges, but `loadbalancer.manageFirewall`
    /// is off: nothing enforces them (a Warning Event, not status).
    pub source_ranges_unenforced: bool,
    /// Why a Service whose `ipFamilyPolicy` prefers two families has one
    /// address (a Warning Event, not status).
    pub dual_stack_not_served: Option<String>,
    /// A drain under way ends after this long: reconcile the Service again
    /// then, to remove the drained members.
    pub recheck_after: Option<std::time::Duration>,
    /// The Service moved between an internal and an external address (a
    /// Normal Event).
    pub moved: Option<String>,
}

impl LbStatus {
    pub(crate) fn at(ips: &[std::net::IpAddr], announcement: &Announcement) -> Self {
        Self {
            ingress: ips
                .iter()
                .map(|ip| Ingress {
                    ip: ip.to_string(),
                    ip_mode: announcement.ip_mode,
                    hostname: announcement.hostname.clone(),
                })
                .collect(),
            warnings: Vec::new(),
            changes: Vec::new(),
            source_ranges_unenforced: false,
            dual_stack_not_served: None,
            recheck_after: None,
            moved: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::source_ranges::SOURCE_RANGES_ANNOTATION;

    fn with(field: &[&str], annotation: Option<&str>) -> ServiceSpec {
        let mut spec = ServiceSpec {
            namespace: "ns".into(),
            name: "web".into(),
            uid: "u1".into(),
            source_ranges: field.iter().map(|s| s.to_string()).collect(),
            ..ServiceSpec::default()
        };
        if let Some(text) = annotation {
            spec.annotations
                .insert(SOURCE_RANGES_ANNOTATION.into(), text.into());
        }
        spec
    }

    fn texts(spec: &ServiceSpec) -> Vec<String> {
        spec.source_ranges()
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn the_field_wins_over_the_annotation_and_host_bits_are_cleared() {
        let spec = with(&["10.1.2.3/8", "192.0.2.0/24"], Some("198.51.100.0/24"));
        assert_eq!(texts(&spec), ["10.0.0.0/8", "192.0.2.0/24"]);
        let spec = with(&[], Some(" 198.51.100.7/24 ,2001:db8::1/32,"));
        assert_eq!(texts(&spec), ["198.51.100.0/24", "2001:db8::/32"]);
        assert!(texts(&with(&["0.0.0.0/0", "10.0.0.0/8"], None)).is_empty());
    }

    #[test]
    fn a_bad_value_is_named_with_its_field() {
        for (field, annotation, bad) in [
            (vec!["10.0.0.0/33"], None, "10.0.0.0/33"),
            (vec![], Some("10.0.0.1"), "10.0.0.1"),
            (vec!["everyone"], None, "everyone"),
        ] {
            let error = with(&field, annotation)
                .source_ranges()
                .unwrap_err()
                .to_string();
            assert!(error.contains(bad), "{error}");
            let named = if annotation.is_some() {
                SOURCE_RANGES_ANNOTATION
            } else {
                "spec.loadBalancerSourceRanges"
            };
            assert!(error.contains(named), "{error}");
        }
    }
}

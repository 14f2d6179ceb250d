//! How a Service is exposed beyond its address: the address's mode and
//! hostname in the Service's status, whether the address outlives the
//! Service, and which Nodes serve it. Contract 0.4.0.

use serde::{Deserialize, Serialize};
use wasmtime::component::{ComponentType, Lift, Lower};

use super::scalars::wit_enum;

wit_enum!(
    /// How clients inside the cluster reach the Service's address
    /// (`status.loadBalancer.ingress[].ipMode`).
    IpMode default Proxy {
        /// Through the load balancer, like clients outside the cluster.
        Proxy = "proxy",
        /// Straight to the endpoints: kube-proxy takes the address as the
        /// Service's own.
        Vip = "vip",
    }
);

impl IpMode {
    /// The status's spelling (`Proxy`, `VIP`).
    pub fn status_value(self) -> &'static str {
        match self {
            IpMode::Proxy => "Proxy",
            IpMode::Vip => "VIP",
        }
    }
}

wit_enum!(
    /// How a Node label is compared in a [`NodeRequirement`].
    SelectorOperator {
        /// The label is set to one of the values.
        In = "in",
        /// The label is not set, or set to none of the values.
        NotIn = "not-in",
        /// The label is set.
        Exists = "exists",
        /// The label is not set.
        DoesNotExist = "does-not-exist",
    }
);

/// One requirement on a Node's labels.
#[derive(
    ComponentType,
    Lift,
    Lower,
    Clone,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct NodeRequirement {
    /// The label key.
    pub key: String,
    /// How the label is compared.
    pub operator: SelectorOperator,
    /// The values `in` and `not-in` compare with; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

impl NodeRequirement {
    /// Whether a Node with `labels` meets the requirement.
    pub fn matches(&self, labels: &std::collections::BTreeMap<String, String>) -> bool {
        let value = labels.get(&self.key);
        match self.operator {
            SelectorOperator::In => value.is_some_and(|v| self.values.contains(v)),
            SelectorOperator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            SelectorOperator::Exists => value.is_some(),
            SelectorOperator::DoesNotExist => value.is_none(),
        }
    }
}

impl std::fmt::Display for NodeRequirement {
    /// Kubernetes' selector syntax: `key in (a,b)`, `!key`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let values = self.values.join(",");
        match self.operator {
            SelectorOperator::In => write!(f, "{} in ({values})", self.key),
            SelectorOperator::NotIn => write!(f, "{} notin ({values})", self.key),
            SelectorOperator::Exists => f.write_str(&self.key),
            SelectorOperator::DoesNotExist => write!(f, "!{}", self.key),
        }
    }
}

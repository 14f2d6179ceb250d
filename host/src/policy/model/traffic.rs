//! How traffic flows beyond the address, profile and algorithm: the
//! Service's session affinity in the input, a port's persistence, HTTP
//! rules and drain period in the decision. Contract 0.3.0.

use serde::{Deserialize, Serialize};
use wasmtime::component::{ComponentType, Lift, Lower};

use super::Protocol;
use super::http::HttpRules;

/// A Service's `spec.sessionAffinity`, with its timeout.
#[derive(
    ComponentType, Lift, Lower, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize,
)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum SessionAffinity {
    /// `None`: each connection may reach any endpoint.
    #[default]
    #[component(name = "none")]
    None,
    /// `ClientIP`, with `sessionAffinityConfig.clientIP.timeoutSeconds`.
    #[component(name = "client-ip")]
    ClientIp(u32),
}

/// How a port's pool keeps a client on the member it first reached.
#[derive(
    ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize,
)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum Persistence {
    /// Every connection is balanced on its own.
    #[default]
    #[component(name = "none")]
    None,
    /// By the client's source address (`CLIENT_IP`).
    #[component(name = "client-ip")]
    ClientIp,
    /// By a cookie of this name that the load balancer inserts (`HTTP_COOKIE`).
    #[component(name = "http-cookie")]
    HttpCookie(String),
    /// By a cookie of this name that the application sets (`APP_COOKIE`).
    #[component(name = "app-cookie")]
    AppCookie(String),
    /// By the client's TLS session (`TLS`).
    #[component(name = "tls")]
    Tls,
}

impl Persistence {
    /// The contract's name of the case, for messages.
    pub fn wit_name(&self) -> &'static str {
        match self {
            Persistence::None => "none",
            Persistence::ClientIp => "client-ip",
            Persistence::HttpCookie(_) => "http-cookie",
            Persistence::AppCookie(_) => "app-cookie",
            Persistence::Tls => "tls",
        }
    }

    /// VCD's `persistenceProfile` `type` and `value`; `None` for no persistence.
    pub fn vcd_profile(&self) -> Option<(&'static str, Option<&str>)> {
        match self {
            Persistence::None => None,
            Persistence::ClientIp => Some(("CLIENT_IP", None)),
            Persistence::HttpCookie(name) => Some(("HTTP_COOKIE", Some(name))),
            Persistence::AppCookie(name) => Some(("APP_COOKIE", Some(name))),
            Persistence::Tls => Some(("TLS", None)),
        }
    }
}

/// How traffic to one Service port flows beyond its profile and algorithm.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PortTraffic {
    /// The Service port this entry covers; with `protocol`, identifies it.
    #[component(name = "service-port")]
    pub service_port: u16,
    /// The protocol of the Service port this entry covers.
    pub protocol: Protocol,
    /// The pool's persistence.
    #[serde(default)]
    pub persistence: Persistence,
    /// The virtual service's HTTP rules.
    #[serde(default, skip_serializing_if = "HttpRules::is_empty")]
    pub http: HttpRules,
    /// How long a leaving node's member is kept disabled before it is
    /// removed; 0 removes it at once.
    #[component(name = "drain-seconds")]
    #[serde(default, skip_serializing_if = "is_zero")]
    pub drain_seconds: u32,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

//! Load balancer health monitors (API 39.0, VCD 10.6). SYSTEM monitors are
//! the backing NSX ALB's own, one per type; TENANT monitors belong to the
//! org that created them; an assignment links a TENANT monitor with a pool.
//! A tenant HTTP or HTTPS monitor probes every member of its pools: the
//! outcome comes from a table tests set (`World::set_probe`), and a failed
//! probe marks the member DOWN (`member_health`). The body rules are in
//! `health_monitor_checks`.

use serde::{Deserialize, Serialize};

use crate::ids::new_urn;
use crate::strict::definition;

/// Each monitor type and the SYSTEM monitor of that type.
pub const SYSTEM_MONITORS: [(&str, &str); 5] = [
    ("HTTP", "System-HTTP"),
    ("HTTPS", "System-HTTPS"),
    ("TCP", "System-TCP"),
    ("UDP", "System-UDP"),
    ("PING", "System-Ping"),
];

/// `EdgeLoadBalancerHealthMonitor`. Up to 38.1 `{type, name, systemDefined}`,
/// a pool's SYSTEM monitor named by type; from 39.0 also a monitor object
/// (id, check counts, the settings of its type), and a pool's item naming
/// one by `id`. The 39.0 properties are left out of answers when unset, so
/// older answers stay as they were.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct HealthMonitor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type")]
    pub monitor_type: String,
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub system_defined: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_checks_count: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_checks_count: Option<i64>,
    /// Seconds between two checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_interval: Option<i64>,
    /// Seconds a check waits for its answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_timeout: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_settings: Option<HttpSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub https_settings: Option<HttpsSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_settings: Option<TcpSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_settings: Option<UdpSettings>,
}
definition!(HealthMonitor, "EdgeLoadBalancerHealthMonitor", serialize);

/// What an HTTP (and, as `HttpsSettings`, an HTTPS) monitor sends and expects.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpSettings {
    /// Unset: the member's port, else the pool's default port.
    pub port: Option<u16>,
    pub request_header: Option<String>,
    pub request_body: Option<String>,
    pub use_exact_request: Option<bool>,
    pub expected_response_data: Option<String>,
    pub expected_response_codes: Option<Vec<String>>,
    pub auth_settings: Option<AuthSettings>,
}
definition!(
    HttpSettings,
    "EdgeLoadBalancerHealthMonitorHttpSettings",
    serialize
);
definition!(
    HttpsSettings = HttpSettings,
    "EdgeLoadBalancerHealthMonitorHttpsSettings"
);

/// `NTLM`, `BASIC` or `NONE`; the password is never answered.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthSettings {
    #[serde(rename = "type")]
    pub auth_type: String,
    pub username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}
definition!(
    AuthSettings,
    "EdgeLoadBalancerHealthMonitorAuthenticationSettings",
    serialize
);

/// What a TCP (and, as `UdpSettings`, a UDP) monitor sends and expects.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct TcpSettings {
    pub port: Option<u16>,
    pub request_data: Option<String>,
    pub expected_response_data: Option<String>,
}
definition!(
    TcpSettings,
    "EdgeLoadBalancerHealthMonitorTcpSettings",
    serialize
);
definition!(
    UdpSettings = TcpSettings,
    "EdgeLoadBalancerHealthMonitorUdpSettings"
);

impl HealthMonitor {
    /// The 39.0 properties it carries that define a monitor rather than
    /// name one: check counts and settings.
    pub fn definition_fields(&self) -> Vec<&'static str> {
        [
            (
                "successfulChecksCount",
                self.successful_checks_count.is_some(),
            ),
            ("failedChecksCount", self.failed_checks_count.is_some()),
            ("sendInterval", self.send_interval.is_some()),
            ("receiveTimeout", self.receive_timeout.is_some()),
            ("httpSettings", self.http_settings.is_some()),
            ("httpsSettings", self.https_settings.is_some()),
            ("tcpSettings", self.tcp_settings.is_some()),
            ("udpSettings", self.udp_settings.is_some()),
        ]
        .into_iter()
        .filter_map(|(field, set)| set.then_some(field))
        .collect()
    }

    /// Every 39.0 property it carries.
    pub fn fields_since_39_0(&self) -> Vec<&'static str> {
        let mut fields = self.definition_fields();
        if self.description.is_some() {
            fields.insert(0, "description");
        }
        if self.id.is_some() {
            fields.insert(0, "id");
        }
        fields
    }

    /// The port an HTTP or HTTPS monitor probes a member on: its settings'
    /// port, else the one the pool sends the member traffic on; `None` for
    /// other types, whose probes vcdsim does not model.
    pub fn probe_port(&self, traffic_port: Option<u32>) -> Option<u16> {
        let settings = match self.monitor_type.as_str() {
            "HTTP" => self.http_settings.as_ref(),
            "HTTPS" => self.https_settings.as_ref().map(|s| &s.0),
            _ => return None,
        };
        settings
            .and_then(|s| s.port)
            .or_else(|| traffic_port.and_then(|p| u16::try_from(p).ok()))
    }

    /// The monitor as answered: without the authentication password.
    pub fn without_password(&self) -> Self {
        let mut monitor = self.clone();
        let settings = [
            monitor.http_settings.as_mut(),
            monitor.https_settings.as_mut().map(|s| &mut s.0),
        ];
        for auth in settings
            .into_iter()
            .flatten()
            .filter_map(|s| s.auth_settings.as_mut())
        {
            auth.password = None;
        }
        monitor
    }
}

/// A health monitor object: a SYSTEM one, or an org's TENANT one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Monitor {
    /// The wire form; `id`, `name` and `systemDefined` are always set.
    pub body: HealthMonitor,
    /// The org of a TENANT monitor (the caller's when it was created);
    /// `None` for a SYSTEM one.
    pub org_id: Option<String>,
}

impl Monitor {
    pub fn id(&self) -> &str {
        self.body.id.as_deref().unwrap_or_default()
    }

    pub fn name(&self) -> &str {
        self.body.name.as_deref().unwrap_or_default()
    }

    pub fn is_system(&self) -> bool {
        self.org_id.is_none()
    }

    /// `SYSTEM` or `TENANT` (vcdsim has no PROVIDER monitors).
    pub fn scope(&self) -> &'static str {
        if self.is_system() { "SYSTEM" } else { "TENANT" }
    }
}

/// A TENANT monitor assigned to a pool.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MonitorAssignment {
    pub id: String,
    pub monitor_id: String,
    pub pool_id: String,
}

/// The SYSTEM monitors, with new ids; their check counts and settings are
/// NSX ALB's and undocumented in VCD, so they are not shown.
pub fn system_monitors() -> Vec<Monitor> {
    SYSTEM_MONITORS
        .iter()
        .map(|(monitor_type, name)| Monitor {
            body: HealthMonitor {
                id: Some(new_urn("loadBalancerHealthMonitor")),
                monitor_type: (*monitor_type).to_string(),
                name: Some((*name).to_string()),
                system_defined: Some(true),
                ..HealthMonitor::default()
            },
            org_id: None,
        })
        .collect()
}

//! The tenant health monitors a Service's pools want (API 39.0+): the
//! policy's tuned settings of a port's monitor, and the node probe — a
//! `Local` Service's `healthCheckNodePort`, or kube-proxy's
//! `:10256/healthz` for other Services when
//! `loadbalancer.kubeProxyHealthCheck` is on. A monitor is named and
//! tagged after its settings, so every pool of the cluster with the same
//! settings shares one.

use crate::lb::naming::short_hash;
use crate::lb::service::ServiceSpec;
use crate::policy::model::{
    HealthMonitor, HttpCheck, MonitorSettings, PortDecision, TrafficPolicy,
};
use crate::vcd::resources::health_monitor::{HttpSettings, L4Settings, TenantMonitor};
use crate::vcd::resources::pool::HealthMonitor as PoolMonitor;

/// kube-proxy's health port: `/healthz` there fails while its Node is
/// being drained or deleted (KEP-3836).
pub const KUBE_PROXY_HEALTH_PORT: u16 = 10256;

/// Checks without tuning: NSX Advanced Load Balancer's own defaults
/// (`send_interval` 10 s, `receive_timeout` 4 s, 2 checks each way).
const DEFAULT_TIMING: MonitorSettings = MonitorSettings {
    interval_seconds: 10,
    timeout_seconds: 4,
    healthy_threshold: 2,
    unhealthy_threshold: 2,
    port: None,
    http: None,
};

/// How pools are monitored on this gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Monitoring {
    /// VCD creates tenant monitors (API 39.0+).
    pub tenant: bool,
    /// `loadbalancer.kubeProxyHealthCheck`: pools of Services that are
    /// not `Local` probe kube-proxy's health port.
    pub kube_proxy: bool,
}

impl Monitoring {
    /// The port a Service's pools probe `/healthz` on, if they probe nodes.
    pub fn node_probe(self, service: &ServiceSpec) -> Option<u16> {
        if !self.tenant {
            return None;
        }
        match service.external_traffic_policy {
            TrafficPolicy::Local => service.health_check_node_port.filter(|p| *p > 0),
            _ => self.kube_proxy.then_some(KUBE_PROXY_HEALTH_PORT),
        }
    }

    /// Whether a `Local` Service's pools are served by every Node, the
    /// probe telling which have endpoints (else only the Nodes with a
    /// ready endpoint are members).
    pub fn probes_local(self, service: &ServiceSpec) -> bool {
        service.external_traffic_policy == TrafficPolicy::Local
            && self.node_probe(service).is_some()
    }
}

/// Names and tags the cluster's monitors.
#[derive(Debug, Clone)]
pub struct MonitorNames {
    prefix: String,
    tag: String,
}

impl MonitorNames {
    /// `tag` is the cluster's monitor tag (see `observe::monitors`).
    pub fn new(cluster_id: &str, identity: &str, tag: &str) -> Self {
        Self {
            prefix: format!(
                "vcd-ccm-monitor-{}",
                short_hash(&format!("{cluster_id}/{identity}"))
            ),
            tag: tag.to_string(),
        }
    }

    /// The monitor `body` (without name and tag) named and tagged.
    fn named(&self, mut body: TenantMonitor) -> TenantMonitor {
        let digest = short_hash(&serde_json::to_string(&body).unwrap_or_default());
        let kind = body.monitor_type.to_lowercase();
        body.name = format!("{}-{kind}-{digest}", self.prefix);
        body.description = Some(format!("{} spec={digest}", self.tag));
        body
    }
}

/// The tenant monitors the pool of `port` wants: its tuned monitor, then
/// the node probe.
pub fn port_monitors(
    names: &MonitorNames,
    probe: Option<u16>,
    port: &PortDecision,
) -> Vec<TenantMonitor> {
    let tuned = port
        .monitor
        .as_ref()
        .filter(|_| port.health_monitor != HealthMonitor::None)
        .map(|settings| tuned(port.health_monitor, settings));
    let probe = probe.map(|p| node_probe(p, port.monitor.as_ref().unwrap_or(&DEFAULT_TIMING)));
    tuned
        .into_iter()
        .chain(probe)
        .map(|body| names.named(body))
        .collect()
}

/// The pool's `healthMonitors`: the system monitor by type (unless tuned),
/// then the tenant ones, whose ids the applier fills in.
pub fn pool_items(port: &PortDecision, tenant: &[TenantMonitor]) -> Vec<PoolMonitor> {
    let system = match port.health_monitor {
        _ if port.monitor.is_some() => None,
        HealthMonitor::None => None,
        other => Some(vcd_type(other)),
    };
    let system = system.map(|kind| PoolMonitor {
        monitor_type: kind.into(),
        extra: serde_json::Map::new(),
    });
    system
        .into_iter()
        .chain(tenant.iter().map(|m| m.pool_item("")))
        .collect()
}

/// VCD's monitor type.
pub fn vcd_type(monitor: HealthMonitor) -> &'static str {
    match monitor {
        HealthMonitor::None | HealthMonitor::Tcp => "TCP",
        HealthMonitor::Udp => "UDP",
        HealthMonitor::Http => "HTTP",
        HealthMonitor::Https => "HTTPS",
        HealthMonitor::Ping => "PING",
    }
}

fn timed(kind: &str, settings: &MonitorSettings) -> TenantMonitor {
    TenantMonitor {
        id: None,
        name: String::new(),
        description: None,
        monitor_type: kind.to_string(),
        successful_checks_count: settings.healthy_threshold,
        failed_checks_count: settings.unhealthy_threshold,
        send_interval: settings.interval_seconds,
        receive_timeout: settings.timeout_seconds,
        http_settings: None,
        https_settings: None,
        tcp_settings: None,
        udp_settings: None,
    }
}

fn tuned(monitor: HealthMonitor, settings: &MonitorSettings) -> TenantMonitor {
    let kind = vcd_type(monitor);
    let mut body = timed(kind, settings);
    let l4 = settings.port.map(|port| L4Settings { port: Some(port) });
    match monitor {
        HealthMonitor::Http => body.http_settings = Some(http(settings)),
        HealthMonitor::Https => body.https_settings = Some(http(settings)),
        HealthMonitor::Tcp => body.tcp_settings = l4,
        HealthMonitor::Udp => body.udp_settings = l4,
        HealthMonitor::Ping | HealthMonitor::None => {}
    }
    body
}

/// `GET /healthz` on the node's `port`: 200 while it serves (a `Local`
/// Service's endpoint there, or kube-proxy not draining the Node).
fn node_probe(port: u16, timing: &MonitorSettings) -> TenantMonitor {
    let probe = MonitorSettings {
        port: Some(port),
        http: Some(HttpCheck {
            path: "/healthz".into(),
            method: crate::policy::model::HttpMethod::Get,
            host: None,
            expected_codes: vec![crate::policy::model::StatusRange {
                first: 200,
                last: 299,
            }],
        }),
        ..timing.clone()
    };
    tuned(HealthMonitor::Http, &probe)
}

/// The request and healthy classes of an HTTP(S) monitor: `GET /` and
/// 2xx or 3xx unless tuned. HTTP/1.1 needs a `Host` header, so a request
/// without one is sent as HTTP/1.0.
fn http(settings: &MonitorSettings) -> HttpSettings {
    let (request, codes) = match &settings.http {
        Some(check) => {
            let method = check.method.to_string().to_uppercase();
            let request = match &check.host {
                Some(host) => format!("{method} {} HTTP/1.1\r\nHost: {host}", check.path),
                None => format!("{method} {} HTTP/1.0", check.path),
            };
            let mut classes: Vec<u16> = check
                .expected_codes
                .iter()
                .flat_map(|r| r.first / 100..=r.last / 100)
                .collect();
            classes.sort_unstable();
            classes.dedup();
            (request, classes)
        }
        None => ("GET / HTTP/1.0".to_string(), vec![2, 3]),
    };
    HttpSettings {
        port: settings.port,
        request_header: Some(request),
        expected_response_codes: codes
            .into_iter()
            .map(|class| format!("HTTP_{class}XX"))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::model::StatusRange;

    fn names() -> MonitorNames {
        MonitorNames::new(
            "c1",
            "kube-uid",
            "vcd-ccm format=4 cluster=c1 kube=kube-uid monitor",
        )
    }

    fn settings(http: Option<HttpCheck>) -> MonitorSettings {
        MonitorSettings {
            interval_seconds: 5,
            timeout_seconds: 2,
            healthy_threshold: 3,
            unhealthy_threshold: 4,
            port: Some(8081),
            http,
        }
    }

    #[test]
    fn a_tuned_http_monitor_carries_its_request_and_classes() {
        let check = HttpCheck {
            path: "/ready".into(),
            method: crate::policy::model::HttpMethod::Head,
            host: Some("shop.example.com".into()),
            expected_codes: vec![StatusRange {
                first: 200,
                last: 399,
            }],
        };
        let wanted = port_monitors(
            &names(),
            None,
            &PortDecision::monitored(HealthMonitor::Http, Some(settings(Some(check)))),
        );
        assert_eq!(wanted.len(), 1);
        let http = wanted[0].http_settings.clone().expect("http settings");
        assert_eq!(
            http.request_header.as_deref(),
            Some("HEAD /ready HTTP/1.1\r\nHost: shop.example.com")
        );
        assert_eq!(http.expected_response_codes, ["HTTP_2XX", "HTTP_3XX"]);
        assert_eq!((wanted[0].send_interval, wanted[0].receive_timeout), (5, 2));
        assert!(wanted[0].name.starts_with("vcd-ccm-monitor-"));
        assert!(wanted[0].name.contains("-http-"));
    }

    #[test]
    fn identical_settings_share_a_name_and_different_ones_do_not() {
        let a = port_monitors(
            &names(),
            None,
            &PortDecision::monitored(HealthMonitor::Tcp, Some(settings(None))),
        );
        let b = port_monitors(
            &names(),
            None,
            &PortDecision::monitored(HealthMonitor::Tcp, Some(settings(None))),
        );
        let mut other = settings(None);
        other.interval_seconds = 6;
        let c = port_monitors(
            &names(),
            None,
            &PortDecision::monitored(HealthMonitor::Tcp, Some(other)),
        );
        assert_eq!(a[0].name, b[0].name);
        assert_ne!(a[0].name, c[0].name);
    }

    #[test]
    fn a_tuned_port_drops_its_system_monitor_and_an_untuned_one_keeps_it() {
        let tuned = PortDecision::monitored(HealthMonitor::Tcp, Some(settings(None)));
        let wanted = port_monitors(&names(), None, &tuned);
        let items = pool_items(&tuned, &wanted);
        assert_eq!(items.len(), 1);
        assert!(items[0].extra.contains_key("id"));
        let plain = PortDecision::monitored(HealthMonitor::Tcp, None);
        let probe = port_monitors(&names(), Some(31000), &plain);
        let items = pool_items(&plain, &probe);
        assert_eq!(items[0].monitor_type, "TCP");
        assert!(items[0].extra.is_empty());
        assert_eq!(items[1].monitor_type, "HTTP");
    }

    #[test]
    fn the_node_probe_asks_healthz_on_the_port_with_the_ports_timing() {
        let wanted = port_monitors(
            &names(),
            Some(31000),
            &PortDecision::monitored(HealthMonitor::None, Some(settings(None))),
        );
        assert_eq!(wanted.len(), 1, "a port without a monitor is still probed");
        let http = wanted[0].http_settings.clone().expect("http settings");
        assert_eq!(http.port, Some(31000));
        assert_eq!(
            http.request_header.as_deref(),
            Some("GET /healthz HTTP/1.0")
        );
        assert_eq!(http.expected_response_codes, ["HTTP_2XX"]);
        assert_eq!(wanted[0].failed_checks_count, 4);
    }
}

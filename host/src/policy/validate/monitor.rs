//! The contract's rules for a port's monitor settings (0.4.0): only where
//! the host creates tenant monitors, only to tune a monitor the port has,
//! and within the bounds the WIT states.

use crate::names::is_dns_subdomain;
use crate::policy::model::{
    DecisionInput, HealthMonitor, HttpCheck, HttpMethod, MonitorSettings, PortDecision,
};
use crate::text::sanitize;

const MAX_SECONDS: u32 = 3600;
/// NSX Advanced Load Balancer's bound on a check's `receive_timeout`.
const MAX_TIMEOUT_SECONDS: u32 = 2400;
const MAX_THRESHOLD: u32 = 50;
const MAX_PATH: usize = 256;
/// `expectedResponseCodes` holds at most 6 items (`maxItems`).
const MAX_CODE_RANGES: usize = 6;

/// Every rule the port's monitor settings break, added to `problems`.
pub fn check(input: &DecisionInput, port: &PortDecision, problems: &mut Vec<String>) {
    let Some(settings) = &port.monitor else {
        return;
    };
    let at = format!("port {}/{} monitor", port.service_port, port.protocol);
    if !input.cluster.capabilities.health_monitors {
        problems.push(format!(
            "{at}: tuned monitors need capabilities.health-monitors, which is false (VCD API {}); leave monitor unset to use VCD's system monitor",
            input.cluster.vcd_api_version
        ));
        return;
    }
    if port.health_monitor == HealthMonitor::None {
        problems.push(format!(
            "{at}: tunes no monitor (health-monitor is none); set a monitor type or drop the settings"
        ));
    }
    check_timing(settings, &at, problems);
    if settings.port.is_some() && port.health_monitor == HealthMonitor::Ping {
        problems.push(format!(
            "{at}: a ping monitor probes no port; drop the port or use a tcp, udp, http or https monitor"
        ));
    }
    match (&settings.http, port.health_monitor) {
        (Some(http), HealthMonitor::Http | HealthMonitor::Https) => check_http(http, &at, problems),
        (Some(_), other) => problems.push(format!(
            "{at}: http settings need an http or https monitor, not {other}"
        )),
        (None, _) => {}
    }
}

fn check_timing(settings: &MonitorSettings, at: &str, problems: &mut Vec<String>) {
    let bounded = |name: &str, value: u32, max: u32, problems: &mut Vec<String>| {
        if !(1..=max).contains(&value) {
            problems.push(format!("{at}: {name} {value} is not within 1 to {max}"));
        }
    };
    bounded(
        "interval-seconds",
        settings.interval_seconds,
        MAX_SECONDS,
        problems,
    );
    bounded(
        "timeout-seconds",
        settings.timeout_seconds,
        MAX_TIMEOUT_SECONDS,
        problems,
    );
    bounded(
        "healthy-threshold",
        settings.healthy_threshold,
        MAX_THRESHOLD,
        problems,
    );
    bounded(
        "unhealthy-threshold",
        settings.unhealthy_threshold,
        MAX_THRESHOLD,
        problems,
    );
    if settings.timeout_seconds >= settings.interval_seconds {
        problems.push(format!(
            "{at}: timeout-seconds {} must be less than interval-seconds {}",
            settings.timeout_seconds, settings.interval_seconds
        ));
    }
    if settings.port == Some(0) {
        problems.push(format!("{at}: port 0 is not a port (1 to 65535)"));
    }
}

fn check_http(http: &HttpCheck, at: &str, problems: &mut Vec<String>) {
    let path_ok = http.path.starts_with('/')
        && http.path.len() <= MAX_PATH
        && http.path.bytes().all(|b| b.is_ascii_graphic());
    if !path_ok {
        problems.push(format!(
            "{at}: path {:?} must start with '/' and be at most {MAX_PATH} bytes of printable ASCII without spaces",
            sanitize(&http.path, 80)
        ));
    }
    if !matches!(
        http.method,
        HttpMethod::Get | HttpMethod::Head | HttpMethod::Post
    ) {
        problems.push(format!(
            "{at}: method {} is not get, head or post",
            http.method
        ));
    }
    if let Some(host) = &http.host
        && !is_dns_subdomain(host)
    {
        problems.push(format!(
            "{at}: host {:?} is not a DNS name",
            sanitize(host, 80)
        ));
    }
    let ranges = http.expected_codes.len();
    if !(1..=MAX_CODE_RANGES).contains(&ranges) {
        problems.push(format!(
            "{at}: expected-codes has {ranges} ranges (1 to {MAX_CODE_RANGES})"
        ));
    }
    for range in &http.expected_codes {
        if !(100..=599).contains(&range.first) || !(range.first..=599).contains(&range.last) {
            problems.push(format!(
                "{at}: expected-codes {}-{} is not a range within 100 to 599",
                range.first, range.last
            ));
        } else if range.first % 100 != 0 || range.last % 100 != 99 {
            // VCD's monitors take status classes (HTTP_2XX), not codes.
            problems.push(format!(
                "{at}: expected-codes {}-{} is not whole status classes: VCD checks classes such as 2xx, so write {}-{}",
                range.first,
                range.last,
                range.first / 100 * 100,
                range.last / 100 * 100 + 99
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::model::StatusRange;

    fn port(monitor: HealthMonitor, settings: MonitorSettings) -> PortDecision {
        PortDecision::monitored(monitor, Some(settings))
    }

    fn settings() -> MonitorSettings {
        MonitorSettings {
            interval_seconds: 10,
            timeout_seconds: 4,
            healthy_threshold: 2,
            unhealthy_threshold: 3,
            port: None,
            http: Some(HttpCheck {
                path: "/healthz".into(),
                method: HttpMethod::Get,
                host: Some("web.example.com".into()),
                expected_codes: vec![StatusRange {
                    first: 200,
                    last: 299,
                }],
            }),
        }
    }

    fn problems(capable: bool, port: &PortDecision) -> Vec<String> {
        let mut input = DecisionInput::default();
        input.cluster.vcd_api_version = "38.1".into();
        input.cluster.capabilities.health_monitors = capable;
        let mut problems = Vec::new();
        check(&input, port, &mut problems);
        problems
    }

    #[test]
    fn settings_are_refused_without_the_capability_naming_the_version() {
        assert_eq!(
            problems(false, &port(HealthMonitor::Http, settings())),
            [
                "port 80/tcp monitor: tuned monitors need capabilities.health-monitors, which is false (VCD API 38.1); leave monitor unset to use VCD's system monitor"
            ]
        );
        assert!(problems(true, &port(HealthMonitor::Http, settings())).is_empty());
    }

    #[test]
    fn every_bound_of_the_wit_is_checked() {
        let bad = MonitorSettings {
            interval_seconds: 0,
            timeout_seconds: 3601,
            healthy_threshold: 51,
            unhealthy_threshold: 0,
            port: Some(0),
            http: Some(HttpCheck {
                path: "healthz now".into(),
                method: HttpMethod::Delete,
                host: Some("-bad-".into()),
                expected_codes: vec![StatusRange {
                    first: 99,
                    last: 200,
                }],
            }),
        };
        assert_eq!(
            problems(true, &port(HealthMonitor::Http, bad)),
            [
                "port 80/tcp monitor: interval-seconds 0 is not within 1 to 3600",
                "port 80/tcp monitor: timeout-seconds 3601 is not within 1 to 2400",
                "port 80/tcp monitor: healthy-threshold 51 is not within 1 to 50",
                "port 80/tcp monitor: unhealthy-threshold 0 is not within 1 to 50",
                "port 80/tcp monitor: timeout-seconds 3601 must be less than interval-seconds 0",
                "port 80/tcp monitor: port 0 is not a port (1 to 65535)",
                "port 80/tcp monitor: path \"healthz now\" must start with '/' and be at most 256 bytes of printable ASCII without spaces",
                "port 80/tcp monitor: method delete is not get, head or post",
                "port 80/tcp monitor: host \"-bad-\" is not a DNS name",
                "port 80/tcp monitor: expected-codes 99-200 is not a range within 100 to 599",
            ]
        );
        let mut codes = settings();
        if let Some(http) = &mut codes.http {
            http.expected_codes = vec![StatusRange {
                first: 200,
                last: 204,
            }];
        }
        assert_eq!(
            problems(true, &port(HealthMonitor::Http, codes)),
            [
                "port 80/tcp monitor: expected-codes 200-204 is not whole status classes: VCD checks classes such as 2xx, so write 200-299"
            ]
        );
        let ping = MonitorSettings {
            port: Some(8080),
            http: None,
            ..settings()
        };
        assert_eq!(
            problems(true, &port(HealthMonitor::Ping, ping)),
            [
                "port 80/tcp monitor: a ping monitor probes no port; drop the port or use a tcp, udp, http or https monitor"
            ]
        );
        let on_tcp = problems(true, &port(HealthMonitor::Tcp, settings()));
        assert_eq!(
            on_tcp,
            ["port 80/tcp monitor: http settings need an http or https monitor, not tcp"]
        );
        let untuned = problems(
            true,
            &port(
                HealthMonitor::None,
                MonitorSettings {
                    http: None,
                    ..settings()
                },
            ),
        );
        assert_eq!(
            untuned,
            [
                "port 80/tcp monitor: tunes no monitor (health-monitor is none); set a monitor type or drop the settings"
            ]
        );
        let mut seven = settings();
        if let Some(http) = &mut seven.http {
            http.expected_codes = vec![
                StatusRange {
                    first: 200,
                    last: 299
                };
                7
            ];
        }
        assert_eq!(
            problems(true, &port(HealthMonitor::Https, seven)),
            ["port 80/tcp monitor: expected-codes has 7 ranges (1 to 6)"]
        );
    }
}

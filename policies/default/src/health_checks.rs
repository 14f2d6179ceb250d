//! Tuned health checks by annotation (contract 0.4.0): the seven
//! `vcd-ccm.io/health-check-*` annotations become the `monitor` settings of
//! every port that has a health monitor, where the VCD creates tenant
//! monitors (API 39.0, VCD 10.6). On an older VCD the ports keep VCD's
//! system monitors and the Service gets a warning, not a refusal: a tuned
//! check is a refinement, and the Service still gets its load balancer.

use crate::read::{get, invalid, shown};
use crate::vcd::lb_policy::types::{
    Cluster, DecisionError, HealthMonitor, HttpCheck, HttpMethod, MonitorSettings, PortDecision,
    Service, StatusRange,
};

/// The health monitor for every port, overriding the per-profile default.
pub const HEALTH_MONITOR: &str = "vcd-ccm.io/health-monitor";
/// Seconds between two checks of a member: `<n>s` or `<n>m`.
pub const CHECK_INTERVAL: &str = "vcd-ccm.io/health-check-interval";
/// Seconds a check waits for its answer: `<n>s` or `<n>m`, less than the interval.
pub const CHECK_TIMEOUT: &str = "vcd-ccm.io/health-check-timeout";
/// Checks in a row that must pass before a member is up.
pub const HEALTHY_THRESHOLD: &str = "vcd-ccm.io/health-check-healthy-threshold";
/// Checks in a row that must fail before a member is down.
pub const UNHEALTHY_THRESHOLD: &str = "vcd-ccm.io/health-check-unhealthy-threshold";
/// The path an `http` or `https` monitor requests.
pub const CHECK_PATH: &str = "vcd-ccm.io/health-check-path";
/// The port probed on each member instead of the member's own.
pub const CHECK_PORT: &str = "vcd-ccm.io/health-check-port";
/// Status classes (`2xx,3xx`) of a healthy answer to an `http` or `https` monitor.
pub const EXPECTED_CODES: &str = "vcd-ccm.io/health-check-expected-codes";

/// The annotations this module reads, in the order their values are checked.
const KEYS: [&str; 7] = [
    CHECK_INTERVAL,
    CHECK_TIMEOUT,
    HEALTHY_THRESHOLD,
    UNHEALTHY_THRESHOLD,
    CHECK_PATH,
    CHECK_PORT,
    EXPECTED_CODES,
];

/// VCD's (NSX ALB's) own defaults for a new monitor (`send_interval`,
/// `receive_timeout`, `successful_checks`, `failed_checks`), so a value
/// left unset means what it means in VCD.
const DEFAULT_INTERVAL_SECONDS: u32 = 10;
const DEFAULT_TIMEOUT_SECONDS: u32 = 4;
const DEFAULT_HEALTHY_THRESHOLD: u32 = 2;
const DEFAULT_UNHEALTHY_THRESHOLD: u32 = 2;
/// The classes of a healthy answer when the Service names none: 2xx and 3xx.
const DEFAULT_CLASSES: [u16; 2] = [2, 3];

/// NSX ALB's bounds, which the host holds decisions to as well.
const MAX_INTERVAL_SECONDS: u32 = 3600;
const MAX_TIMEOUT_SECONDS: u32 = 2400;
const MAX_THRESHOLD: u32 = 50;
const MAX_PATH: usize = 256;

/// What the annotations ask for, validated; nothing set asks for nothing.
pub struct HealthChecks {
    /// The first annotation set: errors about the set as a whole name it.
    first: Option<&'static str>,
    interval: Option<u32>,
    timeout: Option<u32>,
    healthy: Option<u32>,
    unhealthy: Option<u32>,
    path: Option<String>,
    port: Option<u16>,
    /// One range per status class, in class order.
    expected_codes: Option<Vec<StatusRange>>,
}

impl HealthChecks {
    /// Every value checked, on any VCD, so a typo is refused at once
    /// rather than when the VCD is upgraded.
    pub fn read(service: &Service) -> Result<HealthChecks, DecisionError> {
        let checks = HealthChecks {
            first: KEYS.into_iter().find(|key| value(service, key).is_some()),
            interval: parsed(service, CHECK_INTERVAL, interval)?,
            timeout: parsed(service, CHECK_TIMEOUT, timeout)?,
            healthy: parsed(service, HEALTHY_THRESHOLD, threshold)?,
            unhealthy: parsed(service, UNHEALTHY_THRESHOLD, threshold)?,
            path: parsed(service, CHECK_PATH, path)?,
            port: parsed(service, CHECK_PORT, port)?,
            expected_codes: parsed(service, EXPECTED_CODES, expected_codes)?,
        };
        checks.check_timing()?;
        Ok(checks)
    }

    /// A check must time out before the next one starts; defaults count,
    /// so an interval of 3s alone is refused against the default timeout.
    fn check_timing(&self) -> Result<(), DecisionError> {
        let interval = self.interval.unwrap_or(DEFAULT_INTERVAL_SECONDS);
        let timeout = self.timeout.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        if timeout < interval {
            return Ok(());
        }
        let key = if self.timeout.is_some() {
            CHECK_TIMEOUT
        } else {
            CHECK_INTERVAL
        };
        let default = |given: Option<u32>| given.map_or(" (the default)", |_| "");
        Err(invalid(
            key,
            format!(
                "the timeout {timeout}s{} is not less than the interval {interval}s{}: a check must time out before the next one starts; shorten {CHECK_TIMEOUT} or lengthen {CHECK_INTERVAL}",
                default(self.timeout),
                default(self.interval)
            ),
        ))
    }

    /// Path or expected codes, which only `http` and `https` monitors take.
    fn http_key(&self) -> Option<&'static str> {
        match (&self.path, &self.expected_codes) {
            (Some(_), _) => Some(CHECK_PATH),
            (None, Some(_)) => Some(EXPECTED_CODES),
            (None, None) => None,
        }
    }

    /// Tunes the monitor of every port that has one, or warns where the VCD
    /// cannot. Whether the Service has monitors to tune is checked on any
    /// VCD, so upgrading the VCD never turns a Service's warning into a
    /// refusal.
    pub fn apply(
        &self,
        cluster: &Cluster,
        ports: &mut [PortDecision],
        warnings: &mut Vec<String>,
    ) -> Result<(), DecisionError> {
        let Some(first) = self.first else {
            return Ok(());
        };
        if ports
            .iter()
            .all(|p| p.health_monitor == HealthMonitor::None)
        {
            return Err(invalid(
                first,
                format!(
                    "no port of this Service has a health monitor to tune (each port's monitor is none): set {HEALTH_MONITOR} to a monitor such as tcp, or udp for UDP ports, or remove this annotation"
                ),
            ));
        }
        if let Some(key) = self.http_key()
            && !ports.iter().any(|p| is_http(p.health_monitor))
        {
            return Err(invalid(
                key,
                format!(
                    "applies to http and https health monitors, and no port of this Service has one: set {HEALTH_MONITOR}: http, or remove this annotation"
                ),
            ));
        }
        if !cluster.capabilities.health_monitors {
            warnings.push(format!(
                "the vcd-ccm.io/health-check-* annotations are not applied: tuned health monitors need VCD 10.6 (API 39.0) or later, and this VCD speaks API {}; the ports keep VCD's system monitors",
                cluster.vcd_api_version
            ));
            return Ok(());
        }
        let http = self.http_check();
        for port in ports
            .iter_mut()
            .filter(|p| p.health_monitor != HealthMonitor::None)
        {
            port.monitor = Some(self.settings(port.health_monitor, http.as_ref()));
        }
        Ok(())
    }

    fn settings(&self, monitor: HealthMonitor, http: Option<&HttpCheck>) -> MonitorSettings {
        MonitorSettings {
            interval_seconds: self.interval.unwrap_or(DEFAULT_INTERVAL_SECONDS),
            timeout_seconds: self.timeout.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
            healthy_threshold: self.healthy.unwrap_or(DEFAULT_HEALTHY_THRESHOLD),
            unhealthy_threshold: self.unhealthy.unwrap_or(DEFAULT_UNHEALTHY_THRESHOLD),
            // An ICMP echo probes no port.
            port: self.port.filter(|_| monitor != HealthMonitor::Ping),
            http: http.filter(|_| is_http(monitor)).cloned(),
        }
    }

    /// The HTTP check asked for; none (which means `GET /`, 2xx and 3xx)
    /// when the Service names neither a path nor expected codes.
    fn http_check(&self) -> Option<HttpCheck> {
        self.http_key()?;
        Some(HttpCheck {
            path: self.path.clone().unwrap_or_else(|| "/".into()),
            method: HttpMethod::Get,
            host: None,
            expected_codes: self
                .expected_codes
                .clone()
                .unwrap_or_else(|| DEFAULT_CLASSES.map(class_range).to_vec()),
        })
    }
}

fn is_http(monitor: HealthMonitor) -> bool {
    matches!(monitor, HealthMonitor::Http | HealthMonitor::Https)
}

/// The annotation's value, trimmed; blank is unset.
fn value<'a>(service: &'a Service, key: &str) -> Option<&'a str> {
    get(service, key).map(str::trim).filter(|v| !v.is_empty())
}

/// The annotation's value, parsed; a malformed one is refused, naming it.
fn parsed<T>(
    service: &Service,
    key: &str,
    parse: fn(&str) -> Result<T, String>,
) -> Result<Option<T>, DecisionError> {
    value(service, key)
        .map(|v| parse(v).map_err(|message| invalid(key, message)))
        .transpose()
}

/// A whole number written in digits only (no sign, no spaces).
fn number<T: std::str::FromStr>(digits: &str) -> Option<T> {
    let plain = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    if plain { digits.parse().ok() } else { None }
}

/// `<n>s` or `<n>m` in seconds.
fn duration(value: &str) -> Option<u32> {
    let (digits, scale) = match (value.strip_suffix('s'), value.strip_suffix('m')) {
        (Some(digits), _) => (digits, 1),
        (_, Some(digits)) => (digits, 60),
        _ => return None,
    };
    number::<u32>(digits)?.checked_mul(scale)
}

fn interval(value: &str) -> Result<u32, String> {
    duration(value)
        .filter(|s| (1..=MAX_INTERVAL_SECONDS).contains(s))
        .ok_or_else(|| {
            format!(
                "{} is not a check interval: write a duration like 5s or 1m between 1s and {MAX_INTERVAL_SECONDS}s",
                shown(value)
            )
        })
}

fn timeout(value: &str) -> Result<u32, String> {
    duration(value)
        .filter(|s| (1..=MAX_TIMEOUT_SECONDS).contains(s))
        .ok_or_else(|| {
            format!(
                "{} is not a check timeout: write a duration like 2s or 1m between 1s and {MAX_TIMEOUT_SECONDS}s, less than the interval",
                shown(value)
            )
        })
}

fn threshold(value: &str) -> Result<u32, String> {
    number::<u32>(value)
        .filter(|n| (1..=MAX_THRESHOLD).contains(n))
        .ok_or_else(|| {
            format!(
                "{} is not a number of checks: write a whole number from 1 to {MAX_THRESHOLD}",
                shown(value)
            )
        })
}

fn port(value: &str) -> Result<u16, String> {
    number::<u16>(value).filter(|p| *p > 0).ok_or_else(|| {
        format!(
            "{} is not a port: write the port number (1 to 65535) to probe on each member",
            shown(value)
        )
    })
}

fn path(value: &str) -> Result<String, String> {
    let fits = value.starts_with('/')
        && value.len() <= MAX_PATH
        && value.bytes().all(|b| b.is_ascii_graphic());
    if fits {
        return Ok(value.to_string());
    }
    Err(format!(
        "{} is not a request path: write a path that starts with / such as /healthz, at most {MAX_PATH} printable ASCII characters without spaces",
        shown(value)
    ))
}

/// Comma-separated classes `1xx` to `5xx`, each once, as one range per
/// class: VCD checks whole classes.
fn expected_codes(value: &str) -> Result<Vec<StatusRange>, String> {
    let mut classes = Vec::new();
    for item in value.split(',').map(str::trim) {
        let class = status_class(item).ok_or_else(|| {
            format!(
                "{} is not a status class: write classes from 1xx to 5xx separated by commas, such as 2xx,3xx",
                shown(item)
            )
        })?;
        if classes.contains(&class) {
            return Err(format!(
                "{class}xx is listed twice: write each status class once, such as 2xx,3xx"
            ));
        }
        classes.push(class);
    }
    classes.sort_unstable();
    Ok(classes.into_iter().map(class_range).collect())
}

/// The hundreds digit of `1xx` to `5xx` (any case).
fn status_class(item: &str) -> Option<u16> {
    match item.to_ascii_lowercase().as_bytes() {
        [digit @ b'1'..=b'5', b'x', b'x'] => Some(u16::from(digit - b'0')),
        _ => None,
    }
}

/// `2` is 200 to 299.
fn class_range(class: u16) -> StatusRange {
    StatusRange {
        first: class * 100,
        last: class * 100 + 99,
    }
}

//! The rules of a health monitor body (POST and PUT of
//! `/loadBalancer/healthMonitors`) beyond the constraints the reference
//! states, which the spec screen checks first (ports, lengths, item
//! counts). Where the reference is silent, the strict reading: the
//! bounds of NSX ALB's own health monitor object, which VCD fronts;
//! settings only of the monitor's type; an HTTP request line VCD could
//! send as it is. Each refusal names the field, the value and the bound.

use super::health_monitor::{AuthSettings, HealthMonitor, HttpSettings, SYSTEM_MONITORS};
use super::http_policy::{Checked, one_of};

const METHODS: [&str; 6] = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"];
/// NSX ALB's `http_response_code` values: six, the reference's maxItems.
const RESPONSE_CODES: [&str; 6] = [
    "HTTP_ANY", "HTTP_1XX", "HTTP_2XX", "HTTP_3XX", "HTTP_4XX", "HTTP_5XX",
];
const AUTH_TYPES: [&str; 3] = ["NTLM", "BASIC", "NONE"];
const NAME_LENGTH: usize = 128;

/// A required count within NSX ALB's bounds for its `alb_name`.
fn within(path: &str, value: Option<i64>, (min, max): (i64, i64), alb_name: &str) -> Checked {
    let value = value.ok_or_else(|| format!("{path}: required property missing."))?;
    let bound = format!("(NSX ALB's {alb_name}: {min} to {max})");
    match value {
        _ if value < min => Err(format!("{path}: {value} is below minimum {min} {bound}.")),
        _ if value > max => Err(format!("{path}: {value} is above maximum {max} {bound}.")),
        _ => Ok(()),
    }
}

/// `…Settings` present on a monitor of another type.
fn check_settings_type(monitor: &HealthMonitor) -> Checked {
    let present = [
        ("httpSettings", "HTTP", monitor.http_settings.is_some()),
        ("httpsSettings", "HTTPS", monitor.https_settings.is_some()),
        ("tcpSettings", "TCP", monitor.tcp_settings.is_some()),
        ("udpSettings", "UDP", monitor.udp_settings.is_some()),
    ];
    match present
        .iter()
        .find(|(_, of, set)| *set && *of != monitor.monitor_type)
    {
        Some((field, of, _)) => Err(format!(
            "$.{field}: the settings of a {of} monitor, on a monitor of type {}; a monitor takes only the settings of its type (PING takes none).",
            monitor.monitor_type
        )),
        None => Ok(()),
    }
}

/// `METHOD SP /path SP HTTP/1.x`, then `Name: value` lines, separated by
/// CRLF; HTTP/1.1 requires a `Host` line (RFC 9112, 3.2).
fn check_request_header(path: &str, text: &str) -> Checked {
    let mut lines = text.trim_end_matches("\r\n").split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let [method, target, version] = request_line.split(' ').collect::<Vec<_>>()[..] else {
        return Err(format!(
            "{path}: '{request_line}' is not a request line 'METHOD /path HTTP/1.0' (or HTTP/1.1)."
        ));
    };
    one_of(&format!("{path} (method)"), method, &METHODS)?;
    if !target.starts_with('/') {
        return Err(format!(
            "{path}: the request target '{target}' does not start with '/'."
        ));
    }
    if !["HTTP/1.0", "HTTP/1.1"].contains(&version) {
        return Err(format!(
            "{path}: '{version}' is not one of HTTP/1.0, HTTP/1.1."
        ));
    }
    let mut host = false;
    for line in lines {
        let name = line.split_once(':').map_or("", |(name, _)| name);
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_graphic()) || line.contains('\n') {
            return Err(format!(
                "{path}: '{line}' is not a header line 'Name: value' (lines end with \\r\\n)."
            ));
        }
        host |= name.eq_ignore_ascii_case("host");
    }
    if version == "HTTP/1.1" && !host {
        return Err(format!(
            "{path}: an HTTP/1.1 request needs a 'Host: <name>' header line; send one or use HTTP/1.0."
        ));
    }
    Ok(())
}

/// `^(?!\s+$).+`, the reference's pattern, which the spec screen skips
/// (the regex crate has no look-ahead).
fn not_blank(path: &str, value: Option<&String>) -> Checked {
    match value {
        Some(text) if text.trim().is_empty() => Err(format!(
            "{path}: '{text}' does not match pattern ^(?!\\s+$).+ (not only white space)."
        )),
        _ => Ok(()),
    }
}

impl AuthSettings {
    /// BASIC and NTLM log in, so they need a username and a password
    /// (sent again on every PUT: answers never carry it); NONE takes neither.
    fn check(&self, path: &str) -> Checked {
        one_of(&format!("{path}.type"), &self.auth_type, &AUTH_TYPES)?;
        not_blank(&format!("{path}.username"), self.username.as_ref())?;
        not_blank(&format!("{path}.password"), self.password.as_ref())?;
        let credentials = [self.username.is_some(), self.password.is_some()];
        match self.auth_type.as_str() {
            "NONE" if credentials.contains(&true) => {
                Err(format!("{path}: type NONE takes no username or password."))
            }
            "BASIC" | "NTLM" if credentials.contains(&false) => Err(format!(
                "{path}: type {} needs a username and a password.",
                self.auth_type
            )),
            _ => Ok(()),
        }
    }
}

impl HttpSettings {
    fn check(&self, path: &str) -> Checked {
        if let Some(header) = &self.request_header {
            check_request_header(&format!("{path}.requestHeader"), header)?;
        }
        let codes = self.expected_response_codes.iter().flatten();
        for (i, code) in codes.clone().enumerate() {
            let at = format!("{path}.expectedResponseCodes[{i}]");
            one_of(&at, code, &RESPONSE_CODES)?;
            if codes.clone().take(i).any(|earlier| earlier == code) {
                return Err(format!("{at}: '{code}' is listed twice."));
            }
        }
        match &self.auth_settings {
            Some(auth) => auth.check(&format!("{path}.authSettings")),
            None => Ok(()),
        }
    }
}

impl HealthMonitor {
    /// The rules of a monitor object; `$.`-rooted paths, as the spec
    /// screen's.
    pub fn check(&self) -> Checked {
        let name = self
            .name
            .as_deref()
            .ok_or("$.name: required property missing.")?;
        let length = name.chars().count();
        if name.trim().is_empty() || length > NAME_LENGTH {
            return Err(format!(
                "$.name: '{name}' has {length} characters; a name has 1 to {NAME_LENGTH}, not only white space."
            ));
        }
        let types: Vec<&str> = SYSTEM_MONITORS.iter().map(|(t, _)| *t).collect();
        one_of("$.type", &self.monitor_type, &types)?;
        if self.system_defined == Some(true) {
            return Err(
                "$.systemDefined: true is for SYSTEM monitors; absent or false on a tenant's."
                    .to_string(),
            );
        }
        let counts = [
            (
                "successfulChecksCount",
                self.successful_checks_count,
                (1, 50),
                "successful_checks",
            ),
            (
                "failedChecksCount",
                self.failed_checks_count,
                (1, 50),
                "failed_checks",
            ),
            (
                "sendInterval",
                self.send_interval,
                (1, 3600),
                "send_interval",
            ),
            (
                "receiveTimeout",
                self.receive_timeout,
                (1, 2400),
                "receive_timeout",
            ),
        ];
        for (field, value, bounds, alb_name) in counts {
            within(&format!("$.{field}"), value, bounds, alb_name)?;
        }
        let (receive, send) = (
            self.receive_timeout.unwrap_or_default(),
            self.send_interval.unwrap_or_default(),
        );
        if receive >= send {
            return Err(format!(
                "$.receiveTimeout: {receive} is not less than sendInterval {send} (NSX ALB: a check ends before the next one)."
            ));
        }
        check_settings_type(self)?;
        if let Some(settings) = &self.http_settings {
            settings.check("$.httpSettings")?;
        }
        match &self.https_settings {
            Some(settings) => settings.0.check("$.httpsSettings"),
            None => Ok(()),
        }
    }
}

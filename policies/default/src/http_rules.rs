//! HTTP rules by annotation (contract 0.3.0), on the Service's `http` and
//! `https` ports, where the VCD has HTTP policies (API 38.0, VCD 10.5):
//! a redirect of plain HTTP to HTTPS, `X-Forwarded-Proto`/`-Port` headers,
//! HSTS and a per-client request rate limit.

use crate::read::{get, invalid};
use crate::vcd::lb_policy::types::{
    AppProfile, DecisionError, DecisionInput, Header, HeaderAction, HttpMatch, HttpRules,
    PortDecision, RateLimit, RateLimitAction, RequestAction, RequestModification, RequestRule,
    ResponseRule, SecurityAction, SecurityRule,
};

/// `true`, or the port of one of the Service's HTTPS ports: plain HTTP
/// ports answer every request with a redirect to it.
pub const HTTPS_REDIRECT: &str = "vcd-ccm.io/https-redirect";
/// `true`: requests reach the pods with `X-Forwarded-Proto` and
/// `X-Forwarded-Port` set to what the client used.
pub const FORWARDED_HEADERS: &str = "vcd-ccm.io/forwarded-headers";
/// A `Strict-Transport-Security` value (`max-age=<seconds>`, then
/// optionally `; includeSubDomains` and `; preload`), sent on HTTPS ports.
pub const HSTS: &str = "vcd-ccm.io/hsts";
/// `<requests>/<period>` per client (period `<n>s`, `<n>m` or `<n>h`), on
/// every HTTP and HTTPS port; requests over it are answered 429.
pub const RATE_LIMIT: &str = "vcd-ccm.io/rate-limit";

/// The annotations this module reads.
pub const KEYS: [&str; 4] = [HTTPS_REDIRECT, FORWARDED_HEADERS, HSTS, RATE_LIMIT];

/// What the annotations ask of every HTTP port, validated against the
/// Service's ports and the VCD.
pub struct Asked {
    redirect_to: Option<u16>,
    forwarded: bool,
    hsts: Option<String>,
    rate: Option<(u32, u32)>,
}

/// The annotation's value; empty or `false` (any case) asks for nothing.
fn value<'a>(input: &'a DecisionInput, key: &str) -> Option<&'a str> {
    get(&input.service, key)
        .map(str::trim)
        .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case("false"))
}

fn is_http(port: &PortDecision) -> bool {
    matches!(port.profile, AppProfile::Http | AppProfile::Https)
}

impl Asked {
    pub fn read(input: &DecisionInput, ports: &[PortDecision]) -> Result<Self, DecisionError> {
        let asked = KEYS.iter().find(|key| value(input, key).is_some());
        let Some(first) = asked else {
            return Ok(Self {
                redirect_to: None,
                forwarded: false,
                hsts: None,
                rate: None,
            });
        };
        if !input.cluster.capabilities.http_rules {
            return Err(invalid(
                first,
                format!(
                    "HTTP rules need VCD 10.5 (API 38.0) or later, and this VCD speaks API {}; remove the annotation",
                    input.cluster.vcd_api_version
                ),
            ));
        }
        if !ports.iter().any(is_http) {
            return Err(invalid(
                first,
                "applies to HTTP ports, and this Service has none: give a port appProtocol http or https, or list it in service.beta.kubernetes.io/vcloud-avi-ssl-ports".into(),
            ));
        }
        Ok(Self {
            redirect_to: redirect_to(input, ports)?,
            forwarded: match value(input, FORWARDED_HEADERS) {
                None => false,
                Some(flag) if flag.eq_ignore_ascii_case("true") => true,
                Some(other) => {
                    return Err(invalid(
                        FORWARDED_HEADERS,
                        format!("{other:?} is not a boolean: use \"true\" or \"false\""),
                    ));
                }
            },
            hsts: value(input, HSTS)
                .map(|v| hsts(v, ports))
                .transpose()
                .map_err(|m| invalid(HSTS, m))?,
            rate: value(input, RATE_LIMIT)
                .map(rate)
                .transpose()
                .map_err(|m| invalid(RATE_LIMIT, m))?,
        })
    }

    /// The rules of one port; empty for ports that are not HTTP.
    pub fn rules(&self, port: &PortDecision) -> HttpRules {
        let mut rules = HttpRules {
            request: Vec::new(),
            response: Vec::new(),
            security: Vec::new(),
        };
        if !is_http(port) {
            return rules;
        }
        let https = port.profile == AppProfile::Https;
        if let Some(to) = self.redirect_to.filter(|_| !https) {
            rules.security.push(SecurityRule {
                name: "https-redirect".into(),
                when: every_request(),
                action: SecurityAction::RedirectToHttps(to),
            });
        }
        if let Some((requests, period_seconds)) = self.rate {
            rules.security.push(SecurityRule {
                name: "rate-limit".into(),
                when: every_request(),
                action: SecurityAction::RateLimit(RateLimit {
                    requests,
                    period_seconds,
                    then: RateLimitAction::Respond(429),
                }),
            });
        }
        if self.forwarded {
            let set = |name: &str, value: String| {
                HeaderAction::Replace(Header {
                    name: name.into(),
                    value,
                })
            };
            let scheme = if https { "https" } else { "http" };
            rules.request.push(RequestRule {
                name: "forwarded-headers".into(),
                when: every_request(),
                action: RequestAction::Modify(RequestModification {
                    headers: vec![
                        set("X-Forwarded-Proto", scheme.into()),
                        set("X-Forwarded-Port", port.listen_port.to_string()),
                    ],
                    rewrite: None,
                }),
            });
        }
        if let Some(value) = self.hsts.as_ref().filter(|_| https) {
            rules.response.push(ResponseRule {
                name: "hsts".into(),
                when: every_request(),
                headers: vec![HeaderAction::Replace(Header {
                    name: "Strict-Transport-Security".into(),
                    value: value.clone(),
                })],
            });
        }
        rules
    }
}

fn every_request() -> HttpMatch {
    HttpMatch {
        client_addresses: Vec::new(),
        client_addresses_excluded: false,
        methods: Vec::new(),
        path: None,
        headers: Vec::new(),
    }
}

/// The HTTPS port to redirect to: the one named, or the only one.
fn redirect_to(
    input: &DecisionInput,
    ports: &[PortDecision],
) -> Result<Option<u16>, DecisionError> {
    let Some(asked) = value(input, HTTPS_REDIRECT) else {
        return Ok(None);
    };
    let https: Vec<u16> = ports
        .iter()
        .filter(|p| p.profile == AppProfile::Https)
        .map(|p| p.listen_port)
        .collect();
    let listed = || {
        let list: Vec<String> = https.iter().map(u16::to_string).collect();
        match list.is_empty() {
            true => "none: list a port in service.beta.kubernetes.io/vcloud-avi-ssl-ports or give it appProtocol https".to_string(),
            false => list.join(", "),
        }
    };
    let port = match asked.to_ascii_lowercase().as_str() {
        "true" => match https.as_slice() {
            [only] => *only,
            _ => {
                return Err(invalid(
                    HTTPS_REDIRECT,
                    format!(
                        "\"true\" needs exactly one HTTPS port, and this Service's HTTPS ports are {}; name the port instead",
                        listed()
                    ),
                ));
            }
        },
        number => match number.parse::<u16>() {
            Ok(port) if https.contains(&port) => port,
            _ => {
                return Err(invalid(
                    HTTPS_REDIRECT,
                    format!(
                        "{number:?} is not one of this Service's HTTPS ports ({}); use \"true\" or one of them",
                        listed()
                    ),
                ));
            }
        },
    };
    if !ports.iter().any(|p| p.profile == AppProfile::Http) {
        return Err(invalid(
            HTTPS_REDIRECT,
            "this Service has no plain HTTP port to redirect from: give one appProtocol http"
                .into(),
        ));
    }
    Ok(Some(port))
}

/// `max-age=<seconds>` then optional `includeSubDomains` and `preload`
/// (RFC 6797 section 6.1), on a Service with an HTTPS port.
fn hsts(value: &str, ports: &[PortDecision]) -> Result<String, String> {
    if !ports.iter().any(|p| p.profile == AppProfile::Https) {
        return Err("HSTS is sent over HTTPS only, and this Service has no HTTPS port: list one in service.beta.kubernetes.io/vcloud-avi-ssl-ports".into());
    }
    let mut directives = value.split(';').map(str::trim);
    let max_age = directives
        .next()
        .and_then(|d| d.strip_prefix("max-age="))
        .and_then(|s| s.parse::<u32>().ok());
    let rest_ok = directives.all(|d| d == "includeSubDomains" || d == "preload");
    match (max_age, rest_ok) {
        (Some(_), true) => Ok(value.to_string()),
        _ => Err(format!(
            "{value:?} is not an HSTS value: use max-age=<seconds>, optionally followed by ; includeSubDomains and ; preload (e.g. max-age=31536000; includeSubDomains)"
        )),
    }
}

/// `<requests>/<n><s|m|h>`: requests per period per client.
fn rate(value: &str) -> Result<(u32, u32), String> {
    let usage = || {
        format!(
            "{value:?} is not a rate: use <requests>/<period> with the period in s, m or h, such as 100/1s or 6000/1m (1 to 1000000 requests, periods up to 1000000 s)"
        )
    };
    let (count, period) = value.split_once('/').ok_or_else(usage)?;
    let count: u32 = count.trim().parse().map_err(|_| usage())?;
    let period = period.trim();
    // The last character, not the last byte: a multi-byte one must be refused, not split.
    let unit_at = period.char_indices().last().map_or(0, |(i, _)| i);
    let (digits, unit) = period.split_at(unit_at);
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(usage()),
    };
    let seconds = digits
        .parse::<u32>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(usage)?;
    if !(1..=1_000_000).contains(&count) || !(1..=1_000_000).contains(&seconds) {
        return Err(usage());
    }
    Ok((count, seconds))
}

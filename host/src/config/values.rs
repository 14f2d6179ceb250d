//! Values that must be more than a string. Each is checked inside the
//! parser's visit of the scalar, so its error carries the key's path and
//! the scalar's own line.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

use serde::de::{Deserializer, Error, Visitor};

use crate::lb::ranges::Ipv4Range;

/// A string scalar turned into `T` by `check`, whose error message is the
/// problem with the value.
struct CheckedStr<F> {
    expecting: &'static str,
    check: F,
}

impl<T, F: FnOnce(&str) -> Result<T, String>> Visitor<'_> for CheckedStr<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: Error>(self, text: &str) -> Result<T, E> {
        (self.check)(text).map_err(E::custom)
    }
}

fn checked_str<'de, D, T>(
    deserializer: D,
    expecting: &'static str,
    check: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
{
    deserializer.deserialize_str(CheckedStr { expecting, check })
}

/// `vcd.host`: an `http(s)://` URL, returned without a trailing `/`. An
/// empty value is left for the "required" check.
pub(super) fn http_url<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    checked_str(deserializer, "an http(s) URL", |text| {
        let trimmed = text.trim().trim_end_matches('/');
        if !trimmed.is_empty() {
            check_http_url(trimmed)?;
        }
        Ok(trimmed.to_string())
    })
}

fn check_http_url(text: &str) -> Result<(), String> {
    // A URL with '@' may carry a password: say so without echoing it.
    if text.contains('@') {
        return Err(
            "must not contain '@' (a user or password in the URL); credentials come from the vcloud-basic-auth Secret"
                .to_string(),
        );
    }
    let example = "such as https://vcd.example.com";
    let url = reqwest::Url::parse(text)
        .map_err(|error| format!("{text:?} is not a URL ({error}); expected one {example}"))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(format!(
            "{text:?} is not an http(s) URL; expected one {example}"
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "{text:?} has no host name; expected a URL {example}"
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{text:?} has a query or fragment; expected a base URL {example}"
        ));
    }
    Ok(())
}

/// `loadbalancer.oneArm.startIP` / `endIP`.
pub(super) fn ipv4<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Ipv4Addr, D::Error> {
    checked_str(deserializer, "an IPv4 address", |text| {
        text.trim()
            .parse()
            .map_err(|_| format!("{text:?} is not an IPv4 address"))
    })
}

/// `loadbalancer.internal.ranges[].startIP` / `endIP`: either family.
pub(super) fn ip<'de, D: Deserializer<'de>>(deserializer: D) -> Result<IpAddr, D::Error> {
    checked_str(deserializer, "an IP address", |text| {
        text.trim()
            .parse()
            .map_err(|_| format!("{text:?} is not an IPv4 or IPv6 address"))
    })
}

/// `loadbalancer.vipSubnet`: empty means unset, as upstream.
pub(super) fn optional_cidr<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Ipv4Range>, D::Error> {
    checked_str(deserializer, "an IPv4 CIDR", |text| {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(None);
        }
        cidr(trimmed)
            .map(Some)
            .ok_or_else(|| format!("{text:?} is not an IPv4 CIDR such as 203.0.113.0/26"))
    })
}

/// `a.b.c.d/n` as the range from network to broadcast address.
pub fn cidr(text: &str) -> Option<Ipv4Range> {
    let (ip, prefix) = text.trim().split_once('/')?;
    let ip: Ipv4Addr = ip.parse().ok()?;
    let prefix: u32 = prefix.parse().ok().filter(|p| *p <= 32)?;
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    let network = u32::from(ip) & mask;
    Some(Ipv4Range {
        first: Ipv4Addr::from(network),
        last: Ipv4Addr::from(network | !mask),
    })
}

/// `vcd.requestsPerSecond`: a positive number.
struct PositiveRate;

impl Visitor<'_> for PositiveRate {
    type Value = Option<f64>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a positive number of requests per second")
    }

    fn visit_f64<E: Error>(self, rate: f64) -> Result<Option<f64>, E> {
        if rate.is_finite() && rate > 0.0 {
            Ok(Some(rate))
        } else {
            Err(E::custom(format!(
                "{rate} is not a positive number of requests per second"
            )))
        }
    }

    fn visit_u64<E: Error>(self, rate: u64) -> Result<Option<f64>, E> {
        self.visit_f64(rate as f64)
    }

    fn visit_i64<E: Error>(self, rate: i64) -> Result<Option<f64>, E> {
        self.visit_f64(rate as f64)
    }
}

pub(super) fn requests_per_second<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<f64>, D::Error> {
    deserializer.deserialize_f64(PositiveRate)
}

#[cfg(test)]
mod tests {
    use super::{Ipv4Addr, check_http_url, cidr};

    #[test]
    fn cidrs_span_network_to_broadcast() {
        let range = cidr("203.0.113.17/28").unwrap();
        assert_eq!(range.first, Ipv4Addr::new(203, 0, 113, 16));
        assert_eq!(range.last, Ipv4Addr::new(203, 0, 113, 31));
        assert!(cidr("203.0.113.0").is_none());
        assert!(cidr("203.0.113.0/33").is_none());
        assert_eq!(cidr("0.0.0.0/0").unwrap().address_count(), 1 << 32);
    }

    #[test]
    fn hosts_must_be_plain_http_urls() {
        assert!(check_http_url("https://vcd.example.com").is_ok());
        assert!(check_http_url("http://127.0.0.1:8443/tenant").is_ok());
        let scheme = check_http_url("vcd.example.com").unwrap_err();
        assert!(
            scheme.contains("\"vcd.example.com\" is not a URL"),
            "{scheme}"
        );
        let ftp = check_http_url("ftp://vcd.example.com").unwrap_err();
        assert!(ftp.contains("not an http(s) URL"), "{ftp}");
        let query = check_http_url("https://vcd.example.com/?x=1").unwrap_err();
        assert!(query.contains("query or fragment"), "{query}");
        let password = check_http_url("https://admin:hunter2@vcd.example.com").unwrap_err();
        assert!(!password.contains("hunter2"), "{password}");
        assert!(password.contains("'@'"), "{password}");
    }
}

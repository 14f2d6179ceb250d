//! Who may reach a Service: `spec.loadBalancerSourceRanges`, else the
//! `service.beta.kubernetes.io/load-balancer-source-ranges` annotation
//! (comma-separated), as CIDRs. Empty means anywhere.

use std::net::IpAddr;

use super::{LbError, ServiceSpec};
use crate::text::sanitize;

/// The annotation Kubernetes defines for clouds without the spec field.
pub const SOURCE_RANGES_ANNOTATION: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";

/// More ranges than this would not fit a firewall group usefully.
const MAX_RANGES: usize = 4000;

/// One CIDR, with the host bits cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SourceRange {
    network: IpAddr,
    prefix: u8,
}

impl SourceRange {
    /// Parses `a.b.c.d/n` or `x::y/n`; `None` for anything else.
    fn parse(text: &str) -> Option<Self> {
        let (address, prefix) = text.trim().split_once('/')?;
        let address: IpAddr = address.parse().ok()?;
        let prefix: u8 = prefix.parse().ok()?;
        let network = match address {
            IpAddr::V4(v4) if prefix <= 32 => {
                let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
                IpAddr::V4((u32::from(v4) & mask).into())
            }
            IpAddr::V6(v6) if prefix <= 128 => {
                let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
                IpAddr::V6((u128::from(v6) & mask).into())
            }
            _ => return None,
        };
        Some(Self { network, prefix })
    }

    /// Whether this is an IPv6 range.
    pub fn is_ipv6(&self) -> bool {
        self.network.is_ipv6()
    }

    /// Whether the range lets every address in (`0.0.0.0/0`, `::/0`).
    pub fn is_everything(&self) -> bool {
        self.prefix == 0
    }
}

impl std::fmt::Display for SourceRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// The Service's source ranges, sorted and without duplicates; an error
/// names the field and the value that is not a CIDR.
pub fn source_ranges(service: &ServiceSpec) -> Result<Vec<SourceRange>, LbError> {
    let (field, values): (&str, Vec<&str>) = if !service.source_ranges.is_empty() {
        (
            "spec.loadBalancerSourceRanges",
            service.source_ranges.iter().map(String::as_str).collect(),
        )
    } else if let Some(text) = service.annotations.get(SOURCE_RANGES_ANNOTATION) {
        (
            SOURCE_RANGES_ANNOTATION,
            text.split(',').filter(|v| !v.trim().is_empty()).collect(),
        )
    } else {
        return Ok(Vec::new());
    };
    if values.len() > MAX_RANGES {
        return Err(LbError::InvalidService {
            service: service.key(),
            problem: format!(
                "{field} lists {} ranges; at most {MAX_RANGES} are supported",
                values.len()
            ),
        });
    }
    let mut ranges = Vec::with_capacity(values.len());
    for value in values {
        let range = SourceRange::parse(value).ok_or_else(|| LbError::InvalidService {
            service: service.key(),
            problem: format!(
                "{field}: {:?} is not a CIDR; write an address and a prefix length such as 203.0.113.0/24 or 2001:db8::/32",
                sanitize(value.trim(), 64)
            ),
        })?;
        ranges.push(range);
    }
    ranges.sort();
    ranges.dedup();
    // A range that lets everyone in makes the others moot.
    if ranges.iter().any(SourceRange::is_everything) && ranges.iter().all(|r| !r.is_ipv6()) {
        return Ok(Vec::new());
    }
    Ok(ranges)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        source_ranges(spec)
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
            let error = source_ranges(&with(&field, annotation))
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

//! Who may reach a Service: `spec.loadBalancerSourceRanges`, else the
//! `service.beta.kubernetes.io/load-balancer-source-ranges` annotation
//! (comma-separated), as CIDRs. Empty means anywhere.

use std::net::IpAddr;

use crate::lb::errors::LbError;
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

/// The ranges `values` of `field` lists for `service`, sorted and without
/// duplicates; an error names the field and the value that is not a CIDR.
pub fn parse_ranges(
    service: &str,
    field: &str,
    values: &[&str],
) -> Result<Vec<SourceRange>, LbError> {
    if values.len() > MAX_RANGES {
        return Err(LbError::InvalidService {
            service: service.to_string(),
            problem: format!(
                "{field} lists {} ranges; at most {MAX_RANGES} are supported",
                values.len()
            ),
        });
    }
    let mut ranges = Vec::with_capacity(values.len());
    for value in values {
        let range = SourceRange::parse(value).ok_or_else(|| LbError::InvalidService {
            service: service.to_string(),
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

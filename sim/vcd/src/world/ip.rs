//! IPv4 ranges and CIDRs, parsed from scenario and request strings.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

/// An inclusive IPv4 range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpRange {
    pub start_address: Ipv4Addr,
    pub end_address: Ipv4Addr,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IpParseError {
    #[error("'{0}' is not an IPv4 address")]
    Address(String),
    #[error("'{0}' is not a range 'a.b.c.d-e.f.g.h' with start <= end")]
    Range(String),
    #[error("'{0}' is not a CIDR 'a.b.c.d/n'")]
    Cidr(String),
}

pub fn parse_ip(text: &str) -> Result<Ipv4Addr, IpParseError> {
    text.trim()
        .parse()
        .map_err(|_| IpParseError::Address(text.to_string()))
}

impl IpRange {
    /// Parses `a-b` or a single address.
    pub fn parse(text: &str) -> Result<Self, IpParseError> {
        let (start, end) = text.split_once('-').unwrap_or((text, text));
        let range = Self {
            start_address: parse_ip(start).map_err(|_| IpParseError::Range(text.to_string()))?,
            end_address: parse_ip(end).map_err(|_| IpParseError::Range(text.to_string()))?,
        };
        if u32::from(range.start_address) > u32::from(range.end_address) {
            return Err(IpParseError::Range(text.to_string()));
        }
        Ok(range)
    }

    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        (u32::from(self.start_address)..=u32::from(self.end_address)).contains(&u32::from(ip))
    }

    pub fn size(&self) -> u64 {
        u64::from(u32::from(self.end_address) - u32::from(self.start_address)) + 1
    }

    pub fn addresses(&self) -> impl Iterator<Item = Ipv4Addr> {
        (u32::from(self.start_address)..=u32::from(self.end_address)).map(Ipv4Addr::from)
    }
}

/// An IPv4 network `a.b.c.d/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    pub network: Ipv4Addr,
    pub prefix_length: u8,
}

impl Cidr {
    pub fn parse(text: &str) -> Result<Self, IpParseError> {
        let err = || IpParseError::Cidr(text.to_string());
        let (addr, len) = text.split_once('/').ok_or_else(err)?;
        let prefix_length: u8 = len.parse().map_err(|_| err())?;
        if prefix_length > 32 {
            return Err(err());
        }
        Ok(Self {
            network: parse_ip(addr).map_err(|_| err())?,
            prefix_length,
        })
    }

    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        let mask = u32::MAX
            .checked_shl(32 - u32::from(self.prefix_length))
            .unwrap_or(0);
        u32::from(ip) & mask == u32::from(self.network) & mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_cidrs() {
        let range = IpRange::parse("10.0.0.10-10.0.0.12").unwrap();
        assert_eq!(range.size(), 3);
        assert!(range.contains("10.0.0.11".parse().unwrap()));
        assert!(!range.contains("10.0.0.13".parse().unwrap()));
        assert!(IpRange::parse("10.0.0.12-10.0.0.10").is_err());
        assert_eq!(IpRange::parse("1.2.3.4").unwrap().size(), 1);
        let cidr = Cidr::parse("10.0.0.0/24").unwrap();
        assert!(cidr.contains("10.0.0.200".parse().unwrap()));
        assert!(!cidr.contains("10.0.1.1".parse().unwrap()));
        assert!(
            Cidr::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
    }
}

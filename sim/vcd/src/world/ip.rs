//! IPv4 and IPv6 ranges and CIDRs, parsed from scenario and request strings.
//! A range or CIDR holds one family; addresses of the other family are never
//! inside it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

/// An inclusive range of one address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpRange {
    pub start_address: IpAddr,
    pub end_address: IpAddr,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IpParseError {
    #[error("'{0}' is not an IPv4 address")]
    Ipv4Address(String),
    #[error("'{0}' is not an IPv6 address")]
    Ipv6Address(String),
    #[error("'{0}' is not an IPv4 or IPv6 address")]
    Address(String),
    #[error("'{0}' is not a range 'a.b.c.d-e.f.g.h' with start <= end")]
    Range(String),
    #[error("'{0}' is not a CIDR 'a.b.c.d/n'")]
    Cidr(String),
    #[error("'{0}' is not an IPv6 CIDR 'x:x::x/n'")]
    Ipv6Cidr(String),
}

/// An address of either family.
pub fn parse_ip(text: &str) -> Result<IpAddr, IpParseError> {
    text.trim()
        .parse()
        .map_err(|_| IpParseError::Address(text.to_string()))
}

/// An IPv4 address, where the spec constrains a field to `IPV4_IP`.
pub fn parse_ipv4(text: &str) -> Result<Ipv4Addr, IpParseError> {
    text.trim()
        .parse()
        .map_err(|_| IpParseError::Ipv4Address(text.to_string()))
}

/// An IPv6 address, where the spec constrains a field to `IPV6_IP`.
pub fn parse_ipv6(text: &str) -> Result<Ipv6Addr, IpParseError> {
    text.trim()
        .parse()
        .map_err(|_| IpParseError::Ipv6Address(text.to_string()))
}

/// The address as a number, for range arithmetic within its family.
fn ordinal(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

/// The address of `family`'s family at `ordinal` (which fits that family).
fn from_ordinal(family: IpAddr, ordinal: u128) -> IpAddr {
    match family {
        IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::from(ordinal as u32)),
        IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::from(ordinal)),
    }
}

impl IpRange {
    /// Parses `a-b` or a single address; both ends of one family.
    pub fn parse(text: &str) -> Result<Self, IpParseError> {
        let err = || IpParseError::Range(text.to_string());
        let (start, end) = text.split_once('-').unwrap_or((text, text));
        let range = Self {
            start_address: parse_ip(start).map_err(|_| err())?,
            end_address: parse_ip(end).map_err(|_| err())?,
        };
        if range.start_address.is_ipv4() != range.end_address.is_ipv4()
            || ordinal(range.start_address) > ordinal(range.end_address)
        {
            return Err(err());
        }
        Ok(range)
    }

    pub fn is_ipv6(&self) -> bool {
        self.start_address.is_ipv6()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        ip.is_ipv6() == self.is_ipv6()
            && (ordinal(self.start_address)..=ordinal(self.end_address)).contains(&ordinal(ip))
    }

    /// The number of addresses; an IPv6 range may exceed `u64`.
    pub fn size(&self) -> u128 {
        ordinal(self.end_address) - ordinal(self.start_address) + 1
    }

    pub fn addresses(&self) -> impl Iterator<Item = IpAddr> {
        let family = self.start_address;
        (ordinal(self.start_address)..=ordinal(self.end_address))
            .map(move |n| from_ordinal(family, n))
    }
}

/// A network `a.b.c.d/n` or `2001:db8::/n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    pub network: IpAddr,
    pub prefix_length: u8,
}

impl Cidr {
    pub fn parse(text: &str) -> Result<Self, IpParseError> {
        let err = || IpParseError::Cidr(text.to_string());
        let (addr, len) = text.split_once('/').ok_or_else(err)?;
        let prefix_length: u8 = len.parse().map_err(|_| err())?;
        let network = parse_ip(addr).map_err(|_| err())?;
        if prefix_length > Self::bits(network) {
            return Err(err());
        }
        Ok(Self {
            network,
            prefix_length,
        })
    }

    fn bits(ip: IpAddr) -> u8 {
        if ip.is_ipv6() { 128 } else { 32 }
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        if ip.is_ipv6() != self.network.is_ipv6() {
            return false;
        }
        let host_bits = u32::from(Self::bits(ip) - self.prefix_length);
        let mask = u128::MAX.checked_shl(host_bits).unwrap_or(0);
        ordinal(ip) & mask == ordinal(self.network) & mask
    }
}

/// An IPv6 network, where the spec asks for one (`ipv6ServiceNetworkDefinition`).
pub fn parse_ipv6_cidr(text: &str) -> Result<Cidr, IpParseError> {
    Cidr::parse(text)
        .ok()
        .filter(|cidr| cidr.network.is_ipv6())
        .ok_or_else(|| IpParseError::Ipv6Cidr(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ranges_and_cidrs() {
        let range = IpRange::parse("10.0.0.10-10.0.0.12").unwrap();
        assert_eq!(range.size(), 3);
        assert!(range.contains(ip("10.0.0.11")));
        assert!(!range.contains(ip("10.0.0.13")));
        assert!(IpRange::parse("10.0.0.12-10.0.0.10").is_err());
        assert_eq!(IpRange::parse("1.2.3.4").unwrap().size(), 1);
        let cidr = Cidr::parse("10.0.0.0/24").unwrap();
        assert!(cidr.contains(ip("10.0.0.200")));
        assert!(!cidr.contains(ip("10.0.1.1")));
        assert!(Cidr::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
        assert!(Cidr::parse("10.0.0.0/33").is_err());
    }

    #[test]
    fn ipv6_ranges_and_cidrs_keep_to_their_family() {
        let range = IpRange::parse("2001:db8::10-2001:db8::12").unwrap();
        assert!(range.is_ipv6());
        assert_eq!(range.size(), 3);
        assert!(range.contains(ip("2001:db8::11")));
        assert!(!range.contains(ip("2001:db8::13")));
        assert_eq!(
            range.addresses().map(|a| a.to_string()).collect::<Vec<_>>(),
            ["2001:db8::10", "2001:db8::11", "2001:db8::12"]
        );
        let wide = IpRange::parse("2001:db8::-2001:db8::ffff:ffff:ffff:ffff").unwrap();
        assert_eq!(wide.size(), 1 << 64);
        assert!(IpRange::parse("2001:db8::12-2001:db8::10").is_err());
        assert!(IpRange::parse("10.0.0.1-2001:db8::1").is_err());
        // ::a.b.c.d is an IPv6 address, not the IPv4 one.
        assert!(
            !IpRange::parse("0.0.0.0-255.255.255.255")
                .unwrap()
                .contains(ip("::10.0.0.1"))
        );
        let cidr = Cidr::parse("2001:db8:1::/64").unwrap();
        assert!(cidr.contains(ip("2001:db8:1::ffff")));
        assert!(!cidr.contains(ip("2001:db8:2::1")));
        assert!(!cidr.contains(ip("10.0.0.1")));
        assert!(Cidr::parse("::/0").unwrap().contains(ip("2001:db8::1")));
        assert!(
            !Cidr::parse("0.0.0.0/0")
                .unwrap()
                .contains(ip("2001:db8::1"))
        );
        assert!(Cidr::parse("2001:db8::/129").is_err());
        assert!(parse_ipv6_cidr("fd00::1/64").is_ok());
        assert_eq!(
            parse_ipv6_cidr("10.0.0.1/24").unwrap_err().to_string(),
            "'10.0.0.1/24' is not an IPv6 CIDR 'x:x::x/n'"
        );
    }

    #[test]
    fn family_parsers_name_the_family() {
        assert!(parse_ipv4("2001:db8::1").is_err());
        assert_eq!(
            parse_ipv6("10.0.0.1").unwrap_err().to_string(),
            "'10.0.0.1' is not an IPv6 address"
        );
        assert_eq!(parse_ip("2001:db8::1").unwrap(), ip("2001:db8::1"));
    }
}

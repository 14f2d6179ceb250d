//! External address ranges of either family, and the family of an address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::policy::model::IpFamily;

/// An inclusive IPv4 range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Range {
    /// The lowest address of the range.
    pub first: Ipv4Addr,
    /// The highest address of the range, included.
    pub last: Ipv4Addr,
}

impl Ipv4Range {
    pub(crate) fn contains(&self, ip: Ipv4Addr) -> bool {
        self.first <= ip && ip <= self.last
    }

    /// How many addresses the range holds (up to 2^32, hence `u64`).
    pub fn address_count(&self) -> u64 {
        u64::from(u32::from(self.last)) - u64::from(u32::from(self.first)) + 1
    }

    /// The part of the range inside `other`, if any.
    pub fn intersect(&self, other: &Ipv4Range) -> Option<Ipv4Range> {
        let first = self.first.max(other.first);
        let last = self.last.min(other.last);
        (first <= last).then_some(Ipv4Range { first, last })
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = Ipv4Addr> {
        (u32::from(self.first)..=u32::from(self.last)).map(Ipv4Addr::from)
    }
}

/// An inclusive range of addresses of one family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressRange {
    first: IpAddr,
    last: IpAddr,
}

/// The family of `ip`.
pub fn family_of(ip: IpAddr) -> IpFamily {
    match ip {
        IpAddr::V4(_) => IpFamily::Ipv4,
        IpAddr::V6(_) => IpFamily::Ipv6,
    }
}

/// The family that is not `family`.
pub fn other_family(family: IpFamily) -> IpFamily {
    match family {
        IpFamily::Ipv4 => IpFamily::Ipv6,
        IpFamily::Ipv6 => IpFamily::Ipv4,
    }
}

/// How Kubernetes spells `family` (`IPv4`, `IPv6`).
pub fn family_name(family: IpFamily) -> &'static str {
    match family {
        IpFamily::Ipv4 => "IPv4",
        IpFamily::Ipv6 => "IPv6",
    }
}

fn number(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

impl AddressRange {
    /// The range `first`..=`last`, if both are of one family, in order.
    pub fn new(first: IpAddr, last: IpAddr) -> Option<Self> {
        (family_of(first) == family_of(last) && first <= last).then_some(Self { first, last })
    }

    /// Parses the two ends of a range as VCD writes them.
    pub fn parse(first: &str, last: &str) -> Option<Self> {
        Self::new(first.trim().parse().ok()?, last.trim().parse().ok()?)
    }

    /// Whether the two ranges share an address.
    pub fn overlaps(&self, other: &AddressRange) -> bool {
        self.family() == other.family() && self.first <= other.last && other.first <= self.last
    }

    /// The lowest address of the range.
    pub fn first(&self) -> IpAddr {
        self.first
    }

    /// The highest address of the range, included.
    pub fn last(&self) -> IpAddr {
        self.last
    }

    /// The family of both ends.
    pub fn family(&self) -> IpFamily {
        family_of(self.first)
    }

    /// Whether `ip` lies in the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        family_of(ip) == self.family() && self.first <= ip && ip <= self.last
    }

    /// How many addresses the range holds (an IPv6 /0 saturates).
    pub fn address_count(&self) -> u128 {
        (number(self.last) - number(self.first)).saturating_add(1)
    }

    /// The part of the range inside the IPv4 range `limit`; an IPv6 range
    /// is not limited by it.
    pub fn limited_to(&self, limit: Option<Ipv4Range>) -> Option<Self> {
        let (Some(limit), IpAddr::V4(first), IpAddr::V4(last)) = (limit, self.first, self.last)
        else {
            return Some(*self);
        };
        let inside = Ipv4Range { first, last }.intersect(&limit)?;
        Some(Self::from(inside))
    }

    /// The range's addresses in order.
    pub fn iter(&self) -> impl Iterator<Item = IpAddr> + use<> {
        let v6 = matches!(self.first, IpAddr::V6(_));
        (number(self.first)..=number(self.last)).map(move |n| match v6 {
            true => IpAddr::V6(Ipv6Addr::from(n)),
            false => IpAddr::V4(Ipv4Addr::from(n as u32)),
        })
    }
}

impl From<Ipv4Range> for AddressRange {
    fn from(range: Ipv4Range) -> Self {
        Self {
            first: IpAddr::V4(range.first),
            last: IpAddr::V4(range.last),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_keep_to_one_family() {
        let v6 = AddressRange::parse("2001:db8::10", "2001:db8::12").unwrap();
        assert_eq!(v6.address_count(), 3);
        assert_eq!(v6.iter().count(), 3);
        assert!(v6.contains("2001:db8::11".parse().unwrap()));
        assert!(!v6.contains("10.0.0.1".parse().unwrap()));
        assert_eq!(AddressRange::parse("10.0.0.1", "2001:db8::1"), None);
        assert_eq!(AddressRange::parse("10.0.0.9", "10.0.0.1"), None);
        let whole = AddressRange::parse("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").unwrap();
        assert_eq!(whole.address_count(), u128::MAX);
    }

    #[test]
    fn a_vip_subnet_limits_only_ipv4_ranges() {
        let limit = Some(Ipv4Range {
            first: Ipv4Addr::new(10, 0, 0, 5),
            last: Ipv4Addr::new(10, 0, 0, 100),
        });
        let v4 = AddressRange::parse("10.0.0.1", "10.0.0.9").unwrap();
        assert_eq!(
            v4.limited_to(limit),
            AddressRange::parse("10.0.0.5", "10.0.0.9")
        );
        let v6 = AddressRange::parse("2001:db8::1", "2001:db8::9").unwrap();
        assert_eq!(v6.limited_to(limit), Some(v6));
    }
}

//! A Service's external addresses: one per IP family it is served in.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::lb::ranges::other_family;
use crate::policy::model::IpFamily;

/// At most one external address of each family.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Vips {
    v4: Option<Ipv4Addr>,
    v6: Option<Ipv6Addr>,
}

impl Vips {
    /// These addresses with `ip` as its family's.
    pub fn with(mut self, ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => self.v4 = Some(v4),
            IpAddr::V6(v6) => self.v6 = Some(v6),
        }
        self
    }

    pub fn v4(&self) -> Option<Ipv4Addr> {
        self.v4
    }

    pub fn v6(&self) -> Option<Ipv6Addr> {
        self.v6
    }

    pub fn get(&self, family: IpFamily) -> Option<IpAddr> {
        match family {
            IpFamily::Ipv4 => self.v4.map(IpAddr::V4),
            IpFamily::Ipv6 => self.v6.map(IpAddr::V6),
        }
    }

    /// The addresses, `first`'s family first (the order of `ipFamilies`).
    pub fn ordered(&self, first: IpFamily) -> Vec<IpAddr> {
        let second = other_family(first);
        self.get(first)
            .into_iter()
            .chain(self.get(second))
            .collect()
    }

    /// The addresses, IPv4 first.
    pub fn iter(&self) -> impl Iterator<Item = IpAddr> + use<> {
        self.ordered(IpFamily::Ipv4).into_iter()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        self.iter().any(|own| own == ip)
    }
}

/// The addresses, a later one of a family replacing an earlier one.
impl FromIterator<IpAddr> for Vips {
    fn from_iter<I: IntoIterator<Item = IpAddr>>(ips: I) -> Self {
        ips.into_iter().fold(Self::default(), Self::with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_address_per_family_in_the_services_order() {
        let v4: IpAddr = "192.0.2.1".parse().unwrap();
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        let vips = Vips::default().with(v4).with(v6).with(other);
        assert_eq!(vips.ordered(IpFamily::Ipv6), vec![v6, other]);
        assert_eq!(vips.iter().collect::<Vec<_>>(), vec![other, v6]);
        assert!(!vips.contains(v4));
    }
}

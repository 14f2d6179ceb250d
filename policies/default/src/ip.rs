//! Conversions between WIT addresses and `std::net`, and range membership.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::vcd::lb_policy::types::{IpAddress, IpFamily, IpRange};

pub fn to_std(address: &IpAddress) -> IpAddr {
    match *address {
        IpAddress::Ipv4((a, b, c, d)) => IpAddr::V4(Ipv4Addr::new(a, b, c, d)),
        IpAddress::Ipv6((a, b, c, d, e, f, g, h)) => {
            IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h))
        }
    }
}

pub fn from_std(address: IpAddr) -> IpAddress {
    match address {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            IpAddress::Ipv4((a, b, c, d))
        }
        IpAddr::V6(v6) => {
            let [a, b, c, d, e, f, g, h] = v6.segments();
            IpAddress::Ipv6((a, b, c, d, e, f, g, h))
        }
    }
}

pub fn family(address: IpAddr) -> IpFamily {
    match address {
        IpAddr::V4(_) => IpFamily::Ipv4,
        IpAddr::V6(_) => IpFamily::Ipv6,
    }
}

pub fn in_range(address: IpAddr, range: &IpRange) -> bool {
    let (first, last) = (to_std(&range.first), to_std(&range.last));
    match (address, first, last) {
        (IpAddr::V4(a), IpAddr::V4(f), IpAddr::V4(l)) => f <= a && a <= l,
        (IpAddr::V6(a), IpAddr::V6(f), IpAddr::V6(l)) => f <= a && a <= l,
        _ => false,
    }
}

pub fn family_name(family: IpFamily) -> &'static str {
    match family {
        IpFamily::Ipv4 => "IPv4",
        IpFamily::Ipv6 => "IPv6",
    }
}

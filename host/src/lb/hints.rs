//! What would work instead. When a policy declines for want of an address
//! or a certificate, or an address cannot be had, the error names the pools
//! the Service may use (ranges, size, free addresses) or the certificates
//! the library holds and every place a certificate can be named (a TLS
//! Secret, the cert-alias annotation, `loadbalancer.certAlias`).

use std::net::IpAddr;

use super::tls::{TLS_SECRET_ANNOTATION, TLS_SECRET_TYPE};
use crate::policy::model::{AddressPool, DecisionError, DecisionInput, IpRange};
use crate::text::sanitize;

/// Pools or certificates listed in one message; the rest are counted.
const LISTED: usize = 8;
/// How much of the TLS ports annotation a message quotes.
const PORTS_BYTES: usize = 64;
/// The upstream annotation naming the certificate of a Service's TLS ports.
const CERT_ALIAS_ANNOTATION: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-cert-alias";
/// The upstream annotation naming a Service's TLS ports.
const SSL_PORTS_ANNOTATION: &str = "service.beta.kubernetes.io/vcloud-avi-ssl-ports";

/// `; …` to append to a policy's decline, or nothing when the error itself
/// says all there is.
pub fn for_declined(error: &DecisionError, input: &DecisionInput) -> String {
    match error {
        DecisionError::RequestedAddressUnavailable(_) | DecisionError::UnsupportedIpFamily(_) => {
            format!(
                "; the pools this Service may use: {}",
                with_free(&input.pools)
            )
        }
        DecisionError::NoAddressAvailable => format!(
            "; the pools this Service may use: {}; free an address or widen a pool",
            with_free(&input.pools)
        ),
        DecisionError::CertificateNotFound(_) => certificates(input),
        DecisionError::InvalidAnnotation(field) if field.key == CERT_ALIAS_ANNOTATION => {
            certificates(input)
        }
        _ => String::new(),
    }
}

/// `public (11 addresses: 203.0.113.10-203.0.113.20)`.
pub fn extent(pool: &AddressPool) -> String {
    let ranges: Vec<String> = pool.ranges.iter().map(range).collect();
    let size = match pool.ranges.iter().map(addresses).sum::<u128>() {
        1 => "1 address".to_string(),
        n => format!("{n} addresses"),
    };
    format!("{} ({size}: {})", pool.name, ranges.join(", "))
}

/// Every pool's extent, or what it means that there is none.
pub fn extents(pools: &[AddressPool]) -> String {
    listed(pools.iter().map(extent).collect(), "none")
}

fn with_free(pools: &[AddressPool]) -> String {
    let described = pools
        .iter()
        .map(|p| {
            let extent = extent(p);
            format!("{}, {} free)", &extent[..extent.len() - 1], p.free_count)
        })
        .collect();
    listed(
        described,
        "none (the gateway offers no pool to this Service)",
    )
}

fn certificates(input: &DecisionInput) -> String {
    let aliases = input.certificates.iter().map(|c| c.alias.clone()).collect();
    let ports = input
        .service
        .annotations
        .iter()
        .find(|(k, _)| k == SSL_PORTS_ANNOTATION)
        .map(|(_, v)| format!(" for TLS port(s) {}", sanitize(v, PORTS_BYTES)))
        .unwrap_or_default();
    format!(
        "; name a certificate{ports} with the annotation {TLS_SECRET_ANNOTATION} (a {TLS_SECRET_TYPE} Secret of the Service's namespace: <secret>, or <port>=<secret>,…), or one of the org's library with the annotation {CERT_ALIAS_ANNOTATION} or the cloud config's loadbalancer.certAlias (the default policy's certAlias setting); the library holds: {}",
        listed(aliases, "no certificate")
    )
}

fn listed(items: Vec<String>, empty: &str) -> String {
    match items.len() {
        0 => empty.to_string(),
        n if n > LISTED => format!("{}, and {} more", items[..LISTED].join(", "), n - LISTED),
        _ => items.join(", "),
    }
}

fn range(r: &IpRange) -> String {
    if r.first == r.last {
        r.first.to_string()
    } else {
        format!("{}-{}", r.first, r.last)
    }
}

fn addresses(r: &IpRange) -> u128 {
    let number = |ip| match IpAddr::from(ip) {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    };
    number(r.last)
        .saturating_sub(number(r.first))
        .saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::model::{Certificate, PoolSource};

    fn pool(name: &str, first: [u8; 4], last: [u8; 4], free: u32) -> AddressPool {
        AddressPool {
            name: name.into(),
            source: PoolSource::IpBlock,
            ranges: vec![IpRange {
                first: IpAddr::from(first).into(),
                last: IpAddr::from(last).into(),
            }],
            free_count: free,
        }
    }

    #[test]
    fn pools_are_named_with_their_ranges_size_and_free_addresses() {
        let input = DecisionInput {
            pools: vec![pool("public", [203, 0, 113, 10], [203, 0, 113, 20], 3)],
            ..Default::default()
        };
        assert_eq!(
            for_declined(&DecisionError::NoAddressAvailable, &input),
            "; the pools this Service may use: public (11 addresses: 203.0.113.10-203.0.113.20, 3 free); free an address or widen a pool"
        );
        assert_eq!(
            extents(&[pool("one", [10, 0, 0, 1], [10, 0, 0, 1], 1)]),
            "one (1 address: 10.0.0.1)"
        );
        assert_eq!(extents(&[]), "none");
    }

    #[test]
    fn certificates_name_every_place_and_the_library() {
        let input = DecisionInput {
            certificates: (0..10)
                .map(|i| Certificate {
                    alias: format!("c{i}"),
                })
                .collect(),
            ..Default::default()
        };
        let hint = for_declined(&DecisionError::CertificateNotFound("x".into()), &input);
        assert!(hint.contains(CERT_ALIAS_ANNOTATION) && hint.contains("loadbalancer.certAlias"));
        assert!(hint.contains("kubernetes.io/tls Secret") && hint.contains(TLS_SECRET_ANNOTATION));
        assert!(
            hint.ends_with("c0, c1, c2, c3, c4, c5, c6, c7, and 2 more"),
            "{hint}"
        );
    }
}

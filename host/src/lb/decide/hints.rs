//! What would work instead. When a policy declines for want of an address
//! or a certificate, or an address cannot be had, the error names the pools
//! the Service may use (ranges, size, free addresses) or the certificates
//! the library holds and every place a certificate can be named (a TLS
//! Secret, the cert-alias annotation, `loadbalancer.certAlias`).

use std::net::IpAddr;

use crate::lb::tls::{TLS_SECRET_ANNOTATION, TLS_SECRET_TYPE};
use crate::policy::model::{AddressPool, DecisionError, DecisionInput, IpRange};

/// Pools or certificates listed in one message; the rest are counted.
const LISTED: usize = 8;
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
    let ports = tls_ports(input);
    format!(
        "; name a certificate{ports} with the annotation {TLS_SECRET_ANNOTATION} (a {TLS_SECRET_TYPE} Secret of the Service's namespace: <secret>, or <port>=<secret>,…), or one of the org's library with the annotation {CERT_ALIAS_ANNOTATION} or the cloud config's loadbalancer.certAlias (the default policy's certAlias setting); the library holds: {}",
        listed(aliases, "no certificate")
    )
}

/// The entries of a comma-separated annotation of the Service, trimmed.
fn entries<'a>(input: &'a DecisionInput, key: &str) -> Vec<&'a str> {
    input
        .service
        .annotations
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.split(',').map(str::trim).collect())
        .unwrap_or_default()
}

/// ` for TLS ports 443/TCP (appProtocol https), 8443/TCP (ssl-ports
/// annotation)`: the ports that need a certificate by the upstream rules,
/// which the default policy follows: those the ssl-ports annotation lists
/// (by number or name), those a `<port>=<secret>` entry of the TLS Secret
/// annotation names, and those with `appProtocol: https`; nothing when
/// there is none.
fn tls_ports(input: &DecisionInput) -> String {
    let ssl_ports = entries(input, SSL_PORTS_ANNOTATION);
    let secret_ports: Vec<&str> = entries(input, TLS_SECRET_ANNOTATION)
        .into_iter()
        .filter_map(|entry| entry.split_once('=').map(|(port, _)| port.trim()))
        .collect();
    let ports: Vec<String> = input
        .service
        .ports
        .iter()
        .filter_map(|port| {
            let number = port.port.to_string();
            let names =
                |entry: &&str| *entry == number || (!port.name.is_empty() && *entry == port.name);
            let https = port
                .app_protocol
                .as_deref()
                .is_some_and(|p| p.eq_ignore_ascii_case("https"));
            let why: Vec<&str> = [
                (ssl_ports.iter().any(names), "ssl-ports annotation"),
                (secret_ports.iter().any(names), TLS_SECRET_ANNOTATION),
                (https, "appProtocol https"),
            ]
            .into_iter()
            .filter_map(|(applies, why)| applies.then_some(why))
            .collect();
            let protocol = port.protocol.to_string().to_ascii_uppercase();
            (!why.is_empty()).then(|| format!("{number}/{protocol} ({})", why.join(", ")))
        })
        .collect();
    match ports.len() {
        0 => String::new(),
        1 => format!(" for TLS port {}", ports[0]),
        _ => format!(" for TLS ports {}", listed(ports, "")),
    }
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
    use crate::policy::model::{Certificate, PoolSource, ServicePort};

    fn pool(name: &str, first: [u8; 4], last: [u8; 4], free: u32) -> AddressPool {
        AddressPool {
            name: name.into(),
            source: PoolSource::IpBlock,
            ranges: vec![IpRange {
                first: IpAddr::from(first).into(),
                last: IpAddr::from(last).into(),
            }],
            free_count: free,
            external: true,
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
        assert!(!hint.contains("for TLS port"), "no TLS port: {hint}");
    }

    #[test]
    fn certificates_name_the_tls_ports_from_the_annotation_and_app_protocol() {
        let port = |name: &str, port: u16, app_protocol: Option<&str>| ServicePort {
            name: name.into(),
            port,
            app_protocol: app_protocol.map(String::from),
            ..Default::default()
        };
        let mut input = DecisionInput::default();
        input.service.ports = vec![
            port("http", 80, Some("http")),
            port("https", 443, Some("HTTPS")),
            port("admin", 8443, None),
            port("both", 9443, Some("https")),
        ];
        input.service.annotations = vec![
            (SSL_PORTS_ANNOTATION.into(), "admin, 9443".into()),
            (TLS_SECRET_ANNOTATION.into(), "80=web-tls".into()),
        ];
        let hint = for_declined(&DecisionError::CertificateNotFound("x".into()), &input);
        assert!(
            hint.starts_with("; name a certificate for TLS ports 80/TCP (vcd-ccm.io/tls-secret), 443/TCP (appProtocol https), 8443/TCP (ssl-ports annotation), 9443/TCP (ssl-ports annotation, appProtocol https) with "),
            "{hint}"
        );
        input.service.annotations.clear();
        let hint = for_declined(&DecisionError::CertificateNotFound("x".into()), &input);
        assert!(
            hint.contains(
                " for TLS ports 443/TCP (appProtocol https), 9443/TCP (appProtocol https) with "
            ),
            "{hint}"
        );
        input.service.ports.truncate(2);
        let hint = for_declined(&DecisionError::CertificateNotFound("x".into()), &input);
        assert!(
            hint.contains(" for TLS port 443/TCP (appProtocol https) with "),
            "{hint}"
        );
    }
}

//! Which Secrets a Service's `vcd-ccm.io/tls-secret` annotation names. The
//! policy decides which port uses which; the host needs only the names, to
//! read them before the policy is asked. The grammar is the default
//! policy's: comma-separated `<secret>` or `<port>=<secret>` entries.

use std::collections::BTreeSet;

use super::TlsSecretError;
use crate::lb::service::ServiceSpec;

/// The annotation naming a Service's TLS Secrets.
pub const TLS_SECRET_ANNOTATION: &str = "vcd-ccm.io/tls-secret";
/// The longest Secret name Kubernetes accepts (a DNS subdomain).
const MAX_NAME: usize = 253;

/// The distinct Secret names the annotation holds, sorted; none when it is
/// absent or blank.
pub fn secret_names(service: &ServiceSpec) -> Result<BTreeSet<String>, TlsSecretError> {
    let Some(value) = service
        .annotations
        .get(TLS_SECRET_ANNOTATION)
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
    else {
        return Ok(BTreeSet::new());
    };
    value
        .split(',')
        .map(|entry| {
            let name = entry.split_once('=').map_or(entry, |(_, name)| name).trim();
            if is_secret_name(name) {
                Ok(name.to_string())
            } else {
                Err(TlsSecretError::Annotation {
                    entry: entry.trim().to_string(),
                })
            }
        })
        .collect()
}

/// `namespace/name` of each Secret the annotation names validly.
pub fn secret_keys(service: &ServiceSpec) -> BTreeSet<String> {
    secret_names(service)
        .unwrap_or_default()
        .into_iter()
        .map(|name| format!("{}/{name}", service.namespace))
        .collect()
}

/// A DNS subdomain: lower-case letters, digits, `-` and `.`, starting and
/// ending with a letter or digit.
fn is_secret_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotated(value: &str) -> ServiceSpec {
        ServiceSpec {
            annotations: [(TLS_SECRET_ANNOTATION.to_string(), value.to_string())].into(),
            ..ServiceSpec::default()
        }
    }

    #[test]
    fn plain_and_per_port_forms_name_their_secrets_once() {
        let names = secret_names(&annotated(" web-tls , 443=admin.tls,8443=web-tls")).unwrap();
        assert_eq!(
            names,
            BTreeSet::from(["admin.tls".into(), "web-tls".into()])
        );
        assert!(secret_names(&annotated("  ")).unwrap().is_empty());
        assert!(secret_names(&ServiceSpec::default()).unwrap().is_empty());
    }

    #[test]
    fn entries_that_name_no_secret_are_refused() {
        for value in ["Web_TLS", "443=", "web-tls,", "-web"] {
            assert!(
                matches!(
                    secret_names(&annotated(value)),
                    Err(TlsSecretError::Annotation { .. })
                ),
                "{value:?}"
            );
        }
    }
}

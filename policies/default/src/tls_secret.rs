//! The `vcd-ccm.io/tls-secret` annotation: Kubernetes TLS Secrets of the
//! Service's namespace as the certificates of its TLS ports. The host reads
//! each named Secret, uploads it to the org's library and offers it to the
//! policy as the certificate `secret/<name>`; this module only says which
//! port uses which Secret.
//!
//! Grammar: comma-separated entries, spaces around them trimmed. An entry
//! `<secret>` (at most one) is the certificate of every port that terminates
//! TLS; an entry `<port>=<secret>` makes that TCP port terminate TLS with
//! that Secret, whatever the other annotations say. A blank value is unset.

use std::collections::BTreeMap;

use crate::read::tcp_ports;
use crate::vcd::lb_policy::types::{DecisionError, InvalidField, Service};

/// The annotation's key.
pub const TLS_SECRET: &str = "vcd-ccm.io/tls-secret";
/// How the policy input names the certificate uploaded from a Secret.
const ALIAS_PREFIX: &str = "secret/";
/// The longest Secret name Kubernetes accepts (a DNS subdomain).
const MAX_NAME: usize = 253;

/// The Secrets the annotation names.
#[derive(Default)]
pub struct TlsSecrets {
    /// The Secret of every TLS port not named below.
    pub every_port: Option<String>,
    /// Secrets named per Service port; these ports terminate TLS.
    pub per_port: BTreeMap<u16, String>,
}

impl TlsSecrets {
    pub fn read(service: &Service) -> Result<TlsSecrets, DecisionError> {
        let Some(value) = service
            .annotations
            .iter()
            .find(|(k, _)| k == TLS_SECRET)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
        else {
            return Ok(TlsSecrets::default());
        };
        let tcp_ports = tcp_ports(service);
        let mut secrets = TlsSecrets::default();
        for entry in value.split(',').map(str::trim) {
            match entry.split_once('=') {
                None => {
                    let name = secret_name(entry)?;
                    if let Some(first) = secrets.every_port.replace(name) {
                        return Err(invalid(format!(
                            "names {first:?} and {entry:?} for every TLS port; give one Secret, or <port>=<secret> entries"
                        )));
                    }
                }
                Some((port, name)) => {
                    let port = port_number(port.trim())?;
                    if !tcp_ports.contains(&port) {
                        return Err(invalid(format!(
                            "port {port} is not a TCP port of this Service (TCP ports: {tcp_ports:?})"
                        )));
                    }
                    if secrets
                        .per_port
                        .insert(port, secret_name(name.trim())?)
                        .is_some()
                    {
                        return Err(invalid(format!("port {port} is named twice")));
                    }
                }
            }
        }
        Ok(secrets)
    }

    /// The certificate alias of the Secret for `port`, if the annotation names one.
    pub fn alias_for(&self, port: u16) -> Option<String> {
        self.per_port
            .get(&port)
            .or(self.every_port.as_ref())
            .map(|name| format!("{ALIAS_PREFIX}{name}"))
    }
}

fn port_number(text: &str) -> Result<u16, DecisionError> {
    text.parse().ok().filter(|p| *p > 0).ok_or_else(|| {
        invalid(format!(
            "{text:?} is not a port number (1-65535); expected <secret> or <port>=<secret>,… such as \"443=web-tls,8443=admin-tls\""
        ))
    })
}

/// A Secret name: a DNS subdomain (lower-case letters, digits, `-` and `.`).
fn secret_name(text: &str) -> Result<String, DecisionError> {
    let valid = !text.is_empty()
        && text.len() <= MAX_NAME
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && text.starts_with(|c: char| c.is_ascii_alphanumeric())
        && text.ends_with(|c: char| c.is_ascii_alphanumeric());
    if valid {
        Ok(text.to_string())
    } else {
        Err(invalid(format!(
            "{text:?} is not a Secret name (lower-case letters, digits, '-' and '.', at most {MAX_NAME} characters); expected <secret> or <port>=<secret>,…"
        )))
    }
}

fn invalid(message: String) -> DecisionError {
    DecisionError::InvalidAnnotation(InvalidField {
        key: TLS_SECRET.into(),
        message,
    })
}

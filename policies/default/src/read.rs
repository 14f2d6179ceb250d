//! Reading a Service: its annotations and its TCP ports, and the error that
//! names an annotation. Every feature reads through these.

use crate::vcd::lb_policy::types::{DecisionError, InvalidField, Protocol, Service};

/// The decision error naming annotation `key` and what is wrong with it.
pub fn invalid(key: &str, message: String) -> DecisionError {
    DecisionError::InvalidAnnotation(InvalidField {
        key: key.into(),
        message,
    })
}

/// A value as an error message quotes it: escaped and at most 80
/// characters, so an odd or huge annotation cannot garble or flood an Event.
pub fn shown(value: &str) -> String {
    format!("{:?}", value.chars().take(80).collect::<String>())
}

/// The value of annotation `key`, if the Service sets it.
pub fn get<'a>(service: &'a Service, key: &str) -> Option<&'a str> {
    service
        .annotations
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The Service's TCP port numbers, in `spec.ports` order.
pub fn tcp_ports(service: &Service) -> Vec<u16> {
    service
        .ports
        .iter()
        .filter(|p| p.protocol == Protocol::Tcp)
        .map(|p| p.port)
        .collect()
}

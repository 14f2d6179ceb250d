//! HTTP policies of a virtual service (API 38.0, VCD 10.5): ordered request,
//! response and security rules, kept in their wire form. The class names
//! in refusals are vcdsim's (the 37.2 spec has no such definitions).
//! `check` validates enums and combinations, naming the field's path.
//! Here what rules match; the rules, their actions and the lists of one
//! virtual service are in `http_rules`.

use serde::{Deserialize, Serialize};

use crate::strict::definition;

pub(super) type Checked = Result<(), String>;

pub(super) fn one_of(path: &str, value: &str, allowed: &[&str]) -> Checked {
    if allowed.contains(&value) {
        return Ok(());
    }
    Err(format!(
        "{path}: '{value}' is not one of {}.",
        allowed.join(", ")
    ))
}

pub(super) fn each<T>(
    path: &str,
    items: &Option<Vec<T>>,
    check: impl Fn(&str, &T) -> Checked,
) -> Checked {
    for (i, item) in items.iter().flatten().enumerate() {
        check(&format!("{path}[{i}]"), item)?;
    }
    Ok(())
}

const IN: [&str; 2] = ["IS_IN", "IS_NOT_IN"];
const STRING_MATCH: [&str; 10] = [
    "BEGINS_WITH",
    "DOES_NOT_BEGIN_WITH",
    "CONTAINS",
    "DOES_NOT_CONTAIN",
    "ENDS_WITH",
    "DOES_NOT_END_WITH",
    "EQUALS",
    "DOES_NOT_EQUAL",
    "REGEX_MATCH",
    "REGEX_DOES_NOT_MATCH",
];
const METHODS: [&str; 9] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT", "PATCH",
];
pub(super) const PROTOCOLS: [&str; 2] = ["HTTP", "HTTPS"];

/// Client IP, service port, method or status code: `IS_IN` a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct ListMatch {
    pub match_criteria: String,
    pub addresses: Option<Vec<String>>,
    pub ports: Option<Vec<u16>>,
    pub methods: Option<Vec<String>>,
    pub status_codes: Option<Vec<String>>,
}
definition!(ListMatch, "EdgeVirtualServiceHttpListMatch", serialize);

/// A path, query or location against strings (`BEGINS_WITH`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct StringMatch {
    pub match_criteria: String,
    pub match_strings: Vec<String>,
}
definition!(StringMatch, "EdgeVirtualServiceHttpStringMatch", serialize);

/// A header or cookie by name: `EXISTS`, `DOES_NOT_EXIST` or a string match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct KeyMatch {
    pub match_criteria: String,
    pub key: String,
    pub value: Option<Vec<String>>,
}
definition!(KeyMatch, "EdgeVirtualServiceHttpKeyMatch", serialize);

/// What a rule matches; every part optional, all must match. The
/// response-only parts are refused in request and security rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct MatchCriteria {
    pub client_ip_match: Option<ListMatch>,
    pub service_port_match: Option<ListMatch>,
    pub method_match: Option<ListMatch>,
    pub protocol: Option<String>,
    pub path_match: Option<StringMatch>,
    pub query_match: Option<Vec<String>>,
    pub header_match: Option<Vec<KeyMatch>>,
    pub cookie_match: Option<KeyMatch>,
    pub location_header_match: Option<StringMatch>,
    pub response_header_match: Option<Vec<KeyMatch>>,
    pub status_code_match: Option<ListMatch>,
}
definition!(
    MatchCriteria,
    "EdgeVirtualServiceHttpMatchCriteria",
    serialize
);

fn list_match(path: &str, m: &ListMatch, field: &str, allowed: Option<&[&str]>) -> Checked {
    one_of(&format!("{path}.matchCriteria"), &m.match_criteria, &IN)?;
    let values: Vec<String> = match field {
        "addresses" => m.addresses.clone().unwrap_or_default(),
        "ports" => m.ports.iter().flatten().map(u16::to_string).collect(),
        "methods" => m.methods.clone().unwrap_or_default(),
        _ => m.status_codes.clone().unwrap_or_default(),
    };
    if values.is_empty() {
        return Err(format!("{path}.{field} must not be empty."));
    }
    for (i, value) in values.iter().enumerate() {
        if let Some(allowed) = allowed {
            one_of(&format!("{path}.{field}[{i}]"), value, allowed)?;
        }
    }
    Ok(())
}

fn string_match(path: &str, m: &StringMatch) -> Checked {
    one_of(
        &format!("{path}.matchCriteria"),
        &m.match_criteria,
        &STRING_MATCH,
    )?;
    if m.match_strings.is_empty() {
        return Err(format!("{path}.matchStrings must not be empty."));
    }
    Ok(())
}

fn key_match(path: &str, m: &KeyMatch) -> Checked {
    let criteria = format!("{path}.matchCriteria");
    if !["EXISTS", "DOES_NOT_EXIST"].contains(&m.match_criteria.as_str()) {
        one_of(&criteria, &m.match_criteria, &STRING_MATCH)?;
    }
    if m.key.is_empty() {
        return Err(format!("{path}.key must not be empty."));
    }
    Ok(())
}

impl MatchCriteria {
    pub fn check(&self, path: &str, response: bool) -> Checked {
        let only_response = [
            ("locationHeaderMatch", self.location_header_match.is_some()),
            ("responseHeaderMatch", self.response_header_match.is_some()),
            ("statusCodeMatch", self.status_code_match.is_some()),
        ];
        if let Some((field, _)) = only_response.iter().find(|(_, set)| *set && !response) {
            return Err(format!(
                "Unrecognized field \"{field}\" (class EdgeVirtualServiceHttpRequestMatchCriteria) at {path}"
            ));
        }
        if let Some(m) = &self.client_ip_match {
            list_match(&format!("{path}.clientIpMatch"), m, "addresses", None)?;
        }
        if let Some(m) = &self.service_port_match {
            list_match(&format!("{path}.servicePortMatch"), m, "ports", None)?;
        }
        if let Some(m) = &self.method_match {
            list_match(&format!("{path}.methodMatch"), m, "methods", Some(&METHODS))?;
        }
        if let Some(m) = &self.status_code_match {
            list_match(&format!("{path}.statusCodeMatch"), m, "statusCodes", None)?;
        }
        if let Some(protocol) = &self.protocol {
            one_of(&format!("{path}.protocol"), protocol, &PROTOCOLS)?;
        }
        for (field, m) in [
            ("pathMatch", &self.path_match),
            ("locationHeaderMatch", &self.location_header_match),
        ] {
            if let Some(m) = m {
                string_match(&format!("{path}.{field}"), m)?;
            }
        }
        each(
            &format!("{path}.headerMatch"),
            &self.header_match,
            key_match,
        )?;
        each(
            &format!("{path}.responseHeaderMatch"),
            &self.response_header_match,
            key_match,
        )?;
        if let Some(m) = &self.cookie_match {
            key_match(&format!("{path}.cookieMatch"), m)?;
        }
        Ok(())
    }
}

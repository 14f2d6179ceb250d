//! The contract's rules for a port's HTTP rules (0.3.0): only on `http` and
//! `https` ports of a VCD that has HTTP policies, lists and texts within
//! the bounds the WIT states, and values VCD would take. Each problem names
//! the rule and what would work.

use std::collections::HashSet;
use std::net::IpAddr;

use crate::policy::model::{
    AppProfile, DecisionInput, HeaderAction, HttpMatch, HttpRules, RateLimitAction, Redirect,
    RequestAction, SecurityAction, TextMatch,
};

/// Rules per list.
pub const MAX_RULES: usize = 32;
/// A rule's name.
const MAX_NAME: usize = 64;
/// Client addresses, and values of a text match.
const MAX_VALUES: usize = 16;
/// Header matches per rule, and header changes per action.
const MAX_HEADERS: usize = 8;
/// A value, a host or a path.
const MAX_TEXT: usize = 256;
/// A rate limit's count and period.
const MAX_RATE: u32 = 1_000_000;
/// What a security rule's own answer may be (VCD's local responses).
const RESPOND_CODES: [u16; 6] = [200, 204, 403, 404, 429, 501];
/// What a rate limit's own answer may be.
const LIMIT_CODES: [u16; 3] = [403, 404, 429];

/// Every rule the port's HTTP rules break, added to `problems`.
pub fn check(
    input: &DecisionInput,
    rules: &HttpRules,
    profile: AppProfile,
    at: &str,
    problems: &mut Vec<String>,
) {
    if rules.is_empty() {
        return;
    }
    if !matches!(profile, AppProfile::Http | AppProfile::Https) {
        problems.push(format!(
            "{at}: HTTP rules need an http or https port, not profile {profile}"
        ));
        return;
    }
    if !input.cluster.capabilities.http_rules {
        problems.push(format!(
            "{at}: HTTP rules need VCD API 38.0 (VCD 10.5) or later, and this VCD speaks {}; leave the lists empty on this installation",
            input.cluster.vcd_api_version
        ));
        return;
    }
    let mut rule = Rule { problems };
    let request = rules.request.iter().map(|r| (&r.name, &r.when));
    rule.list(at, "request", request);
    let response = rules.response.iter().map(|r| (&r.name, &r.when));
    rule.list(at, "response", response);
    let security = rules.security.iter().map(|r| (&r.name, &r.when));
    rule.list(at, "security", security);
    for r in &rules.request {
        let at = format!("{at}: request rule {:?}", r.name);
        match &r.action {
            RequestAction::Redirect(redirect) => rule.redirect(&at, redirect),
            RequestAction::Modify(modify) => {
                if modify.headers.is_empty() && modify.rewrite.is_none() {
                    rule.problem(&at, "modify needs header changes, a rewrite or both");
                }
                rule.header_actions(&at, &modify.headers);
                if let Some(rewrite) = &modify.rewrite {
                    if rewrite.host.is_none() && rewrite.path.is_none() {
                        rule.problem(&at, "a rewrite needs a host, a path or both");
                    }
                    rule.host(&at, rewrite.host.as_deref());
                    rule.path(&at, rewrite.path.as_deref());
                }
            }
        }
    }
    for r in &rules.response {
        let at = format!("{at}: response rule {:?}", r.name);
        if r.headers.is_empty() {
            rule.problem(&at, "needs 1 to 8 header changes");
        }
        rule.header_actions(&at, &r.headers);
    }
    for r in &rules.security {
        let at = format!("{at}: security rule {:?}", r.name);
        match &r.action {
            SecurityAction::Allow | SecurityAction::Close => {}
            SecurityAction::RedirectToHttps(0) => {
                rule.problem(&at, "redirect-to-https needs a port from 1 to 65535")
            }
            SecurityAction::RedirectToHttps(_) => {}
            SecurityAction::Respond(code) => rule.code(&at, *code, &RESPOND_CODES),
            SecurityAction::RateLimit(limit) => {
                for (what, value) in [
                    ("requests", limit.requests),
                    ("period-seconds", limit.period_seconds),
                ] {
                    if !(1..=MAX_RATE).contains(&value) {
                        rule.problem(&at, &format!("{what} {value} is not 1 to {MAX_RATE}"));
                    }
                }
                match &limit.then {
                    RateLimitAction::Close => {}
                    RateLimitAction::Respond(code) => rule.code(&at, *code, &LIMIT_CODES),
                    RateLimitAction::Redirect(redirect) => rule.redirect(&at, redirect),
                }
            }
        }
    }
}

struct Rule<'a> {
    problems: &'a mut Vec<String>,
}

impl Rule<'_> {
    fn problem(&mut self, at: &str, what: &str) {
        self.problems.push(format!("{at}: {what}"));
    }

    /// The list's size, its rules' names, and what each matches.
    fn list<'r>(
        &mut self,
        at: &str,
        kind: &str,
        rules: impl ExactSizeIterator<Item = (&'r String, &'r HttpMatch)>,
    ) {
        if rules.len() > MAX_RULES {
            self.problem(
                at,
                &format!("{} {kind} rules; at most {MAX_RULES} per list", rules.len()),
            );
            return;
        }
        let mut names = HashSet::new();
        for (name, when) in rules {
            let at = format!("{at}: {kind} rule {name:?}");
            if name.trim().is_empty()
                || name.chars().count() > MAX_NAME
                || name.chars().any(char::is_control)
            {
                self.problem(
                    &at,
                    &format!("a name is 1 to {MAX_NAME} characters, without control characters"),
                );
            }
            if !names.insert(name) {
                self.problem(&at, &format!("two {kind} rules have this name"));
            }
            self.when(&at, when);
        }
    }

    fn when(&mut self, at: &str, when: &HttpMatch) {
        if when.client_addresses.len() > MAX_VALUES {
            self.problem(at, &format!("at most {MAX_VALUES} client addresses"));
        }
        for address in &when.client_addresses {
            if !is_address_or_cidr(address) {
                self.problem(
                    at,
                    &format!(
                        "client address {address:?} is not an address or CIDR such as 192.0.2.0/24"
                    ),
                );
            }
        }
        if when.client_addresses.is_empty() && when.client_addresses_excluded {
            self.problem(at, "client-addresses-excluded needs client addresses");
        }
        if let Some(path) = &when.path {
            self.text_match(&format!("{at}: path"), path);
        }
        if when.headers.len() > MAX_HEADERS {
            self.problem(at, &format!("at most {MAX_HEADERS} header matches"));
        }
        for header in &when.headers {
            self.header_name(at, &header.name);
            if let Some(value) = &header.value {
                self.text_match(&format!("{at}: header {:?}", header.name), value);
            }
        }
    }

    fn text_match(&mut self, at: &str, m: &TextMatch) {
        if m.values.is_empty() || m.values.len() > MAX_VALUES {
            self.problem(at, &format!("needs 1 to {MAX_VALUES} values"));
        }
        let bad =
            |v: &String| v.is_empty() || v.len() > MAX_TEXT || v.chars().any(char::is_control);
        if m.values.iter().any(bad) {
            self.problem(
                at,
                &format!("a value is 1 to {MAX_TEXT} bytes, without control characters"),
            );
        }
    }

    fn header_actions(&mut self, at: &str, actions: &[HeaderAction]) {
        if actions.len() > MAX_HEADERS {
            self.problem(at, &format!("at most {MAX_HEADERS} header changes"));
        }
        for action in actions {
            let (name, value) = match action {
                HeaderAction::Add(h) | HeaderAction::Replace(h) => (&h.name, Some(&h.value)),
                HeaderAction::Remove(name) => (name, None),
            };
            self.header_name(at, name);
            if value.is_some_and(|v| v.len() > MAX_TEXT || v.chars().any(char::is_control)) {
                self.problem(
                    at,
                    &format!("header {name:?}: a value is at most {MAX_TEXT} bytes, without control characters"),
                );
            }
        }
    }

    /// A header name is an HTTP token (RFC 9110 section 5.6.2).
    fn header_name(&mut self, at: &str, name: &str) {
        let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(token) {
            self.problem(
                at,
                &format!("header name {name:?} is not 1 to {MAX_NAME} letters, digits and !#$%&'*+-.^_`|~"),
            );
        }
    }

    fn redirect(&mut self, at: &str, redirect: &Redirect) {
        self.host(at, redirect.host.as_deref());
        self.path(at, redirect.path.as_deref());
        if redirect.port == Some(0) {
            self.problem(at, "a redirect's port is 1 to 65535");
        }
    }

    fn host(&mut self, at: &str, host: Option<&str>) {
        let valid = |h: &str| {
            !h.is_empty()
                && h.len() <= 253
                && h.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-.:[]".contains(c))
        };
        if let Some(host) = host.filter(|h| !valid(h)) {
            self.problem(
                at,
                &format!("host {host:?} is not a DNS name or address of at most 253 characters"),
            );
        }
    }

    fn path(&mut self, at: &str, path: Option<&str>) {
        let valid = |p: &str| {
            p.starts_with('/')
                && p.len() <= MAX_TEXT
                && !p.chars().any(|c| c.is_control() || c == ' ')
        };
        if let Some(path) = path.filter(|p| !valid(p)) {
            self.problem(
                at,
                &format!(
                    "path {path:?} must start with / and be at most {MAX_TEXT} bytes without spaces"
                ),
            );
        }
    }

    fn code(&mut self, at: &str, code: u16, allowed: &[u16]) {
        if !allowed.contains(&code) {
            let list: Vec<String> = allowed.iter().map(u16::to_string).collect();
            self.problem(
                at,
                &format!("status {code} is not one of {}", list.join(", ")),
            );
        }
    }
}

fn is_address_or_cidr(text: &str) -> bool {
    match text.split_once('/') {
        None => text.parse::<IpAddr>().is_ok(),
        Some((address, bits)) => match (address.parse::<IpAddr>(), bits.parse::<u8>()) {
            (Ok(IpAddr::V4(_)), Ok(bits)) => bits <= 32,
            (Ok(IpAddr::V6(_)), Ok(bits)) => bits <= 128,
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::model::{
        Header, RateLimit, RequestModification, RequestRule, SecurityRule, TextCriteria,
    };

    fn input(api: &str, http_rules: bool) -> DecisionInput {
        let mut input = DecisionInput::default();
        input.cluster.vcd_api_version = api.into();
        input.cluster.capabilities.http_rules = http_rules;
        input
    }

    fn problems(input: &DecisionInput, rules: &HttpRules) -> Vec<String> {
        let mut problems = Vec::new();
        check(input, rules, AppProfile::Http, "port 80", &mut problems);
        problems
    }

    fn security(name: &str, action: SecurityAction) -> SecurityRule {
        SecurityRule {
            name: name.into(),
            when: HttpMatch::default(),
            action,
        }
    }

    #[test]
    fn rules_below_api_38_are_refused_naming_the_version() {
        let rules = HttpRules {
            security: vec![security("https", SecurityAction::RedirectToHttps(443))],
            ..HttpRules::default()
        };
        assert_eq!(
            problems(&input("37.2", false), &rules),
            [
                "port 80: HTTP rules need VCD API 38.0 (VCD 10.5) or later, and this VCD speaks 37.2; leave the lists empty on this installation"
            ]
        );
        assert!(problems(&input("38.0", true), &rules).is_empty());
    }

    #[test]
    fn each_bad_part_is_named_with_what_works() {
        let mut when = HttpMatch {
            client_addresses: vec!["10.0.0.0/33".into()],
            ..HttpMatch::default()
        };
        when.path = Some(TextMatch {
            criteria: TextCriteria::BeginsWith,
            values: vec![],
        });
        let rules = HttpRules {
            request: vec![RequestRule {
                name: "fwd".into(),
                when,
                action: RequestAction::Modify(RequestModification {
                    headers: vec![HeaderAction::Add(Header {
                        name: "Bad Name".into(),
                        value: "x".into(),
                    })],
                    rewrite: None,
                }),
            }],
            security: vec![
                security(
                    "limit",
                    SecurityAction::RateLimit(RateLimit {
                        requests: 0,
                        period_seconds: 1,
                        then: RateLimitAction::Respond(500),
                    }),
                ),
                security("limit", SecurityAction::Respond(302)),
            ],
            ..HttpRules::default()
        };
        assert_eq!(
            problems(&input("38.0", true), &rules),
            [
                "port 80: request rule \"fwd\": client address \"10.0.0.0/33\" is not an address or CIDR such as 192.0.2.0/24",
                "port 80: request rule \"fwd\": path: needs 1 to 16 values",
                "port 80: security rule \"limit\": two security rules have this name",
                "port 80: request rule \"fwd\": header name \"Bad Name\" is not 1 to 64 letters, digits and !#$%&'*+-.^_`|~",
                "port 80: security rule \"limit\": requests 0 is not 1 to 1000000",
                "port 80: security rule \"limit\": status 500 is not one of 403, 404, 429",
                "port 80: security rule \"limit\": status 302 is not one of 200, 204, 403, 404, 429, 501",
            ]
        );
    }

    #[test]
    fn more_than_32_rules_in_a_list_are_refused() {
        let rules = HttpRules {
            security: (0..33)
                .map(|i| security(&format!("r{i}"), SecurityAction::Allow))
                .collect(),
            ..HttpRules::default()
        };
        assert_eq!(
            problems(&input("38.0", true), &rules),
            ["port 80: 33 security rules; at most 32 per list"]
        );
    }
}

//! A port's HTTP rules as VCD takes them (three lists per virtual service,
//! API 38.0), and how the virtual service's tag records what was written:
//! its `spec` word is the virtual service's digest, then, when any list has
//! rules, `.<request>.<response>.<security>`, a digest per list (`-` for an
//! empty one). A list is written only when its digest differs from the
//! recorded one, and the tag is written after the lists, so a crash between
//! the two writes them again rather than forgetting them.

use crate::lb::naming::short_hash;
use crate::policy::model::{
    HeaderAction, HttpMatch, HttpRules, RateLimitAction, Redirect, RequestAction, SecurityAction,
    TextMatch,
};
use crate::vcd::resources::http_policy::{
    self as wire, KeyMatch, ListMatch, LocalResponseAction, MatchCriteria, RuleKind, RuleList,
    StringMatch,
};

/// The digest of a list with no rules.
pub const EMPTY: &str = "-";

/// The three lists of one virtual service, in VCD's form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleSet {
    pub request: Vec<wire::RequestRule>,
    pub response: Vec<wire::ResponseRule>,
    pub security: Vec<wire::SecurityRule>,
}

/// What a tag records of the lists: a digest per list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded(pub [String; 3]);

impl Default for Recorded {
    fn default() -> Self {
        Self([EMPTY.into(), EMPTY.into(), EMPTY.into()])
    }
}

impl Recorded {
    /// Splits a tag's `spec` word into the virtual service's digest and
    /// the lists' digests (all empty when the word has none).
    pub fn split(spec: &str) -> (&str, Recorded) {
        let mut parts = spec.split('.');
        let own = parts.next().unwrap_or_default();
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c), None) => (own, Recorded([a.into(), b.into(), c.into()])),
            _ => (own, Recorded::default()),
        }
    }

    /// The `spec` word for a virtual service of digest `own`.
    pub fn spec(&self, own: &str) -> String {
        if *self == Recorded::default() {
            return own.to_string();
        }
        format!("{own}.{}.{}.{}", self.0[0], self.0[1], self.0[2])
    }

    /// The kinds whose digest differs from `other`'s.
    pub fn differing(&self, other: &Recorded) -> Vec<RuleKind> {
        RuleKind::ALL
            .into_iter()
            .enumerate()
            .filter(|(i, _)| self.0[*i] != other.0[*i])
            .map(|(_, kind)| kind)
            .collect()
    }
}

impl RuleSet {
    /// The lists for `rules` (empty ones included).
    pub fn of(rules: &HttpRules) -> Self {
        Self {
            request: rules.request.iter().map(request_rule).collect(),
            response: rules
                .response
                .iter()
                .map(|r| wire::ResponseRule {
                    name: r.name.clone(),
                    active: true,
                    logging: false,
                    match_criteria: criteria(&r.when),
                    header_actions: header_actions(&r.headers),
                })
                .collect(),
            security: rules.security.iter().map(security_rule).collect(),
        }
    }

    /// The list of `kind`, whole.
    pub fn list(&self, kind: RuleKind) -> RuleList {
        match kind {
            RuleKind::Request => RuleList::Request(self.request.clone()),
            RuleKind::Response => RuleList::Response(self.response.clone()),
            RuleKind::Security => RuleList::Security(self.security.clone()),
        }
    }

    /// A digest per list.
    pub fn recorded(&self) -> Recorded {
        fn digest<T: serde::Serialize>(rules: &[T]) -> String {
            match rules.is_empty() {
                true => EMPTY.to_string(),
                false => short_hash(&serde_json::to_string(rules).unwrap_or_default()),
            }
        }
        Recorded([
            digest(&self.request),
            digest(&self.response),
            digest(&self.security),
        ])
    }
}

fn upper(wit_name: &str) -> String {
    wit_name.replace('-', "_").to_uppercase()
}

fn text_match(m: &TextMatch) -> StringMatch {
    StringMatch {
        match_criteria: upper(m.criteria.wit_name()),
        match_strings: m.values.clone(),
    }
}

fn criteria(when: &HttpMatch) -> MatchCriteria {
    let in_or_not = |excluded: bool| if excluded { "IS_NOT_IN" } else { "IS_IN" };
    let headers: Vec<KeyMatch> = when
        .headers
        .iter()
        .map(|h| match &h.value {
            None => KeyMatch {
                match_criteria: "EXISTS".into(),
                key: h.name.clone(),
                value: None,
            },
            Some(m) => KeyMatch {
                match_criteria: upper(m.criteria.wit_name()),
                key: h.name.clone(),
                value: Some(m.values.clone()),
            },
        })
        .collect();
    MatchCriteria {
        client_ip_match: (!when.client_addresses.is_empty()).then(|| ListMatch {
            match_criteria: in_or_not(when.client_addresses_excluded).into(),
            addresses: Some(when.client_addresses.clone()),
            methods: None,
        }),
        method_match: (!when.methods.is_empty()).then(|| ListMatch {
            match_criteria: "IS_IN".into(),
            addresses: None,
            methods: Some(when.methods.iter().map(|m| upper(m.wit_name())).collect()),
        }),
        path_match: when.path.as_ref().map(text_match),
        header_match: (!headers.is_empty()).then_some(headers),
    }
}

fn header_actions(actions: &[HeaderAction]) -> Option<Vec<wire::HeaderAction>> {
    let wire = actions
        .iter()
        .map(|a| match a {
            HeaderAction::Add(h) | HeaderAction::Replace(h) => wire::HeaderAction {
                action: if matches!(a, HeaderAction::Add(_)) {
                    "ADD"
                } else {
                    "REPLACE"
                }
                .into(),
                name: h.name.clone(),
                value: Some(h.value.clone()),
            },
            HeaderAction::Remove(name) => wire::HeaderAction {
                action: "REMOVE".into(),
                name: name.clone(),
                value: None,
            },
        })
        .collect::<Vec<_>>();
    (!wire.is_empty()).then_some(wire)
}

fn redirect(r: &Redirect) -> wire::RedirectAction {
    wire::RedirectAction {
        protocol: r.scheme.map(|s| upper(s.wit_name())),
        host: r.host.clone(),
        port: r.port,
        path: r.path.clone(),
        keep_query: Some(r.keep_query),
        status_code: Some(r.code.status()),
    }
}

fn request_rule(rule: &crate::policy::model::RequestRule) -> wire::RequestRule {
    let mut wire = wire::RequestRule {
        name: rule.name.clone(),
        active: true,
        logging: false,
        match_criteria: criteria(&rule.when),
        header_actions: None,
        redirect_action: None,
        rewrite_url_action: None,
    };
    match &rule.action {
        RequestAction::Redirect(r) => wire.redirect_action = Some(redirect(r)),
        RequestAction::Modify(m) => {
            wire.header_actions = header_actions(&m.headers);
            wire.rewrite_url_action = m.rewrite.as_ref().map(|r| wire::RewriteUrlAction {
                host: r.host.clone(),
                existing_path: r.path.clone(),
                keep_query: Some(r.keep_query),
            });
        }
    }
    wire
}

fn security_rule(rule: &crate::policy::model::SecurityRule) -> wire::SecurityRule {
    let mut wire = wire::SecurityRule {
        name: rule.name.clone(),
        active: true,
        logging: false,
        match_criteria: criteria(&rule.when),
        allow_or_close_connection_action: None,
        redirect_to_https_action: None,
        local_response_action: None,
        rate_limit_action: None,
    };
    match &rule.action {
        SecurityAction::Allow => wire.allow_or_close_connection_action = Some("ALLOW".into()),
        SecurityAction::Close => wire.allow_or_close_connection_action = Some("CLOSE".into()),
        SecurityAction::RedirectToHttps(port) => {
            wire.redirect_to_https_action = Some(wire::RedirectToHttpsAction { port: *port })
        }
        SecurityAction::Respond(code) => {
            wire.local_response_action = Some(LocalResponseAction { status_code: *code })
        }
        SecurityAction::RateLimit(limit) => {
            let mut action = wire::RateLimitAction {
                count: limit.requests,
                period: limit.period_seconds,
                close_connection_action: None,
                redirect_action: None,
                local_response_action: None,
            };
            match &limit.then {
                RateLimitAction::Close => action.close_connection_action = Some("CLOSE".into()),
                RateLimitAction::Respond(code) => {
                    action.local_response_action = Some(LocalResponseAction { status_code: *code })
                }
                RateLimitAction::Redirect(r) => action.redirect_action = Some(redirect(r)),
            }
            wire.rate_limit_action = Some(action);
        }
    }
    wire
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_word_without_lists_reads_as_empty_lists_and_round_trips() {
        let (own, recorded) = Recorded::split("ab12cd34");
        assert_eq!((own, &recorded), ("ab12cd34", &Recorded::default()));
        assert_eq!(recorded.spec(own), "ab12cd34");
        let with = Recorded(["-".into(), "0011aabb".into(), "-".into()]);
        let word = with.spec("ab12cd34");
        assert_eq!(word, "ab12cd34.-.0011aabb.-");
        assert_eq!(Recorded::split(&word), ("ab12cd34", with.clone()));
        assert_eq!(
            with.differing(&Recorded::default()),
            vec![RuleKind::Response]
        );
    }
}

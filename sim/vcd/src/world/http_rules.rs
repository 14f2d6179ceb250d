//! The rules of a virtual service's HTTP policies (API 38.0) and their
//! actions: header changes, redirects, URL and `Location` rewrites, allow
//! or close, local responses and rate limits.

use serde::{Deserialize, Serialize};

use super::http_policy::{Checked, MatchCriteria, PROTOCOLS, each, one_of};
use crate::strict::definition;

/// `ADD`, `REMOVE` or `REPLACE` a header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct HeaderAction {
    pub action: String,
    pub name: String,
    pub value: Option<String>,
}
definition!(
    HeaderAction,
    "EdgeVirtualServiceHttpHeaderAction",
    serialize
);

fn header_action(path: &str, a: &HeaderAction) -> Checked {
    one_of(
        &format!("{path}.action"),
        &a.action,
        &["ADD", "REMOVE", "REPLACE"],
    )?;
    if a.action != "REMOVE" && a.value.is_none() {
        return Err(format!(
            "{path}.value is required to {} a header.",
            a.action
        ));
    }
    Ok(())
}

/// A redirect (request rules, rate limits) or a `Location` rewrite
/// (response rules); `statusCode` only on redirects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct RedirectAction {
    pub protocol: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub path: Option<String>,
    pub keep_query: Option<bool>,
    pub status_code: Option<u16>,
}
definition!(
    RedirectAction,
    "EdgeVirtualServiceHttpRedirectAction",
    serialize
);

fn redirect(path: &str, a: &RedirectAction, status: bool) -> Checked {
    if let Some(protocol) = &a.protocol {
        one_of(&format!("{path}.protocol"), protocol, &PROTOCOLS)?;
    }
    match (a.status_code, status) {
        (Some(code), true) => one_of(
            &format!("{path}.statusCode"),
            &code.to_string(),
            &["301", "302", "307"],
        ),
        (Some(_), false) => Err(format!("{path}.statusCode is not an option here.")),
        (None, _) => Ok(()),
    }
}

/// Rewrites the request's host and path before it reaches the pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct RewriteUrlAction {
    pub host: Option<String>,
    pub existing_path: Option<String>,
    pub keep_query: Option<bool>,
}
definition!(
    RewriteUrlAction,
    "EdgeVirtualServiceHttpRewriteUrlAction",
    serialize
);

/// An answer the service engine gives itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct LocalResponseAction {
    pub status_code: u16,
    pub content: Option<String>,
    pub content_type: Option<String>,
}
definition!(
    LocalResponseAction,
    "EdgeVirtualServiceHttpLocalResponseAction",
    serialize
);

fn local_response(path: &str, a: &LocalResponseAction) -> Checked {
    one_of(
        &format!("{path}.statusCode"),
        &a.status_code.to_string(),
        &["200", "204", "403", "404", "429", "501"],
    )
}

/// `count` requests per `period` seconds per client, then one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct RateLimitAction {
    pub count: u32,
    pub period: u32,
    pub close_connection_action: Option<String>,
    pub redirect_action: Option<RedirectAction>,
    pub local_response_action: Option<LocalResponseAction>,
}
definition!(
    RateLimitAction,
    "EdgeVirtualServiceHttpRateLimitAction",
    serialize
);

fn rate_limit(path: &str, a: &RateLimitAction) -> Checked {
    if a.count == 0 || a.period == 0 {
        return Err(format!("{path}: count and period must be at least 1."));
    }
    let actions = usize::from(a.close_connection_action.is_some())
        + usize::from(a.redirect_action.is_some())
        + usize::from(a.local_response_action.is_some());
    if actions != 1 {
        return Err(format!(
            "{path} needs exactly one of closeConnectionAction, redirectAction, localResponseAction."
        ));
    }
    if let Some(close) = &a.close_connection_action {
        one_of(&format!("{path}.closeConnectionAction"), close, &["CLOSE"])?;
    }
    if let Some(r) = &a.redirect_action {
        redirect(&format!("{path}.redirectAction"), r, true)?;
    }
    if let Some(l) = &a.local_response_action {
        local_response(&format!("{path}.localResponseAction"), l)?;
    }
    Ok(())
}

/// Fields every rule has.
fn rule_head(path: &str, name: &str) -> Checked {
    if name.trim().is_empty() {
        return Err(format!("{path}.name must not be empty."));
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestRule {
    pub name: String,
    #[serde(default = "yes")]
    pub active: bool,
    #[serde(default)]
    pub logging: bool,
    pub match_criteria: MatchCriteria,
    pub header_actions: Option<Vec<HeaderAction>>,
    pub redirect_action: Option<RedirectAction>,
    pub rewrite_url_action: Option<RewriteUrlAction>,
}
definition!(RequestRule, "EdgeVirtualServiceHttpRequestRule", serialize);

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct ResponseRule {
    pub name: String,
    #[serde(default = "yes")]
    pub active: bool,
    #[serde(default)]
    pub logging: bool,
    pub match_criteria: MatchCriteria,
    pub header_actions: Option<Vec<HeaderAction>>,
    pub rewrite_location_header_action: Option<RedirectAction>,
}
definition!(
    ResponseRule,
    "EdgeVirtualServiceHttpResponseRule",
    serialize
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct SecurityRule {
    pub name: String,
    #[serde(default = "yes")]
    pub active: bool,
    #[serde(default)]
    pub logging: bool,
    pub match_criteria: MatchCriteria,
    pub allow_or_close_connection_action: Option<String>,
    pub redirect_to_https_action: Option<RedirectToHttps>,
    pub local_response_action: Option<LocalResponseAction>,
    pub rate_limit_action: Option<RateLimitAction>,
}
definition!(
    SecurityRule,
    "EdgeVirtualServiceHttpSecurityRule",
    serialize
);

/// Redirects plain HTTP to HTTPS on `port`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase", deny_unknown_fields)]
pub struct RedirectToHttps {
    pub port: u16,
}
definition!(
    RedirectToHttps,
    "EdgeVirtualServiceHttpRedirectToHttpsAction",
    serialize
);

impl RequestRule {
    pub fn check(&self, path: &str) -> Checked {
        rule_head(path, &self.name)?;
        self.match_criteria
            .check(&format!("{path}.matchCriteria"), false)?;
        each(
            &format!("{path}.headerActions"),
            &self.header_actions,
            header_action,
        )?;
        let rewrites = self.header_actions.as_ref().is_some_and(|h| !h.is_empty())
            || self.rewrite_url_action.is_some();
        match (&self.redirect_action, rewrites) {
            (Some(_), true) => Err(format!(
                "{path}: a redirectAction excludes headerActions and rewriteUrlAction."
            )),
            (Some(r), false) => redirect(&format!("{path}.redirectAction"), r, true),
            (None, true) => Ok(()),
            (None, false) => Err(format!("{path} needs an action.")),
        }
    }
}

impl ResponseRule {
    pub fn check(&self, path: &str) -> Checked {
        rule_head(path, &self.name)?;
        self.match_criteria
            .check(&format!("{path}.matchCriteria"), true)?;
        each(
            &format!("{path}.headerActions"),
            &self.header_actions,
            header_action,
        )?;
        if let Some(r) = &self.rewrite_location_header_action {
            redirect(&format!("{path}.rewriteLocationHeaderAction"), r, false)?;
        } else if self.header_actions.as_ref().is_none_or(Vec::is_empty) {
            return Err(format!("{path} needs an action."));
        }
        Ok(())
    }
}

impl SecurityRule {
    pub fn check(&self, path: &str) -> Checked {
        rule_head(path, &self.name)?;
        self.match_criteria
            .check(&format!("{path}.matchCriteria"), false)?;
        let actions = usize::from(self.allow_or_close_connection_action.is_some())
            + usize::from(self.redirect_to_https_action.is_some())
            + usize::from(self.local_response_action.is_some())
            + usize::from(self.rate_limit_action.is_some());
        if actions != 1 {
            return Err(format!(
                "{path} needs exactly one of allowOrCloseConnectionAction, redirectToHttpsAction, \
                 localResponseAction, rateLimitAction."
            ));
        }
        if let Some(action) = &self.allow_or_close_connection_action {
            one_of(
                &format!("{path}.allowOrCloseConnectionAction"),
                action,
                &["ALLOW", "CLOSE"],
            )?;
        }
        if let Some(l) = &self.local_response_action {
            local_response(&format!("{path}.localResponseAction"), l)?;
        }
        if let Some(r) = &self.rate_limit_action {
            rate_limit(&format!("{path}.rateLimitAction"), r)?;
        }
        Ok(())
    }
}

/// The three ordered rule lists of one virtual service.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpPolicies {
    pub virtual_service_id: String,
    pub request_rules: Vec<RequestRule>,
    pub response_rules: Vec<ResponseRule>,
    pub security_rules: Vec<SecurityRule>,
}

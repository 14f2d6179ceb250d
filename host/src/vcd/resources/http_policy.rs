//! A virtual service's HTTP policies (API 38.0, VCD 10.5): three ordered
//! rule lists, each read and replaced whole at
//! `/cloudapi/1.0.0/loadBalancer/virtualServices/{id}/httpPolicy/{requestRules,responseRules,securityRules}`
//! as `{"values": [...]}`. Only the fields the CCM writes are modelled;
//! the rest of a read is ignored, as the CCM replaces lists rather than
//! editing them.

use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::{Values, encode};
use crate::vcd::client::{ApiRequest, VcdClient};
use crate::vcd::errors::VcdError;
use crate::vcd::serialize::write_on_gateway;

const SERVICES: &str = "/cloudapi/1.0.0/loadBalancer/virtualServices";

/// `IS_IN` / `IS_NOT_IN` a list of client addresses or of methods.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMatch {
    /// `IS_IN`, `EXISTS`, `BEGINS_WITH`, ... as the match takes.
    pub match_criteria: String,
    /// Client addresses or CIDRs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<String>>,
    /// Request methods, in upper case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methods: Option<Vec<String>>,
}

/// A path against strings (`BEGINS_WITH`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringMatch {
    /// `IS_IN`, `EXISTS`, `BEGINS_WITH`, ... as the match takes.
    pub match_criteria: String,
    /// The values compared with.
    pub match_strings: Vec<String>,
}

/// A header by name: `EXISTS` or a string match of its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyMatch {
    /// `IS_IN`, `EXISTS`, `BEGINS_WITH`, ... as the match takes.
    pub match_criteria: String,
    /// The header's name.
    pub key: String,
    /// The value(s); none for `EXISTS` and `REMOVE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Vec<String>>,
}

/// What a rule matches; all parts given must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchCriteria {
    /// The client's address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_ip_match: Option<ListMatch>,
    /// The request's method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method_match: Option<ListMatch>,
    /// The request's path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_match: Option<StringMatch>,
    /// Request headers, all of which must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_match: Option<Vec<KeyMatch>>,
}

/// `ADD`, `REPLACE` or `REMOVE` a header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HeaderAction {
    /// `ADD`, `REPLACE` or `REMOVE`.
    pub action: String,
    /// The name.
    pub name: String,
    /// The value(s); none for `EXISTS` and `REMOVE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// A redirect; parts not given are the request's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RedirectAction {
    /// `HTTP` or `HTTPS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Whether the query string is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_query: Option<bool>,
    /// The HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<u16>,
}

/// Rewrites the request's host and path before it reaches the pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RewriteUrlAction {
    /// The host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The new path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub existing_path: Option<String>,
    /// Whether the query string is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_query: Option<bool>,
}

/// An answer the load balancer gives itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalResponseAction {
    /// The HTTP status.
    pub status_code: u16,
}

/// `count` requests per `period` seconds per client, then one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitAction {
    /// Requests allowed per period.
    pub count: u32,
    /// The period, in seconds.
    pub period: u32,
    /// `CLOSE` the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close_connection_action: Option<String>,
    /// Redirect the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_action: Option<RedirectAction>,
    /// Answer with a status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_response_action: Option<LocalResponseAction>,
}

/// Redirects plain HTTP to HTTPS on `port`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RedirectToHttpsAction {
    /// The port.
    pub port: u16,
}

/// A request rule: header changes and a URL rewrite, or a redirect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestRule {
    /// The name.
    pub name: String,
    /// Whether the rule applies; always true here.
    pub active: bool,
    /// Whether matches are logged; always false here.
    pub logging: bool,
    /// `IS_IN`, `EXISTS`, `BEGINS_WITH`, ... as the match takes.
    pub match_criteria: MatchCriteria,
    /// Header changes, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_actions: Option<Vec<HeaderAction>>,
    /// Redirect the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_action: Option<RedirectAction>,
    /// A URL rewrite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite_url_action: Option<RewriteUrlAction>,
}

/// A response rule: header changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponseRule {
    /// The name.
    pub name: String,
    /// Whether the rule applies; always true here.
    pub active: bool,
    /// Whether matches are logged; always false here.
    pub logging: bool,
    /// `IS_IN`, `EXISTS`, `BEGINS_WITH`, ... as the match takes.
    pub match_criteria: MatchCriteria,
    /// Header changes, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_actions: Option<Vec<HeaderAction>>,
}

/// A security rule: exactly one action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityRule {
    /// The name.
    pub name: String,
    /// Whether the rule applies; always true here.
    pub active: bool,
    /// Whether matches are logged; always false here.
    pub logging: bool,
    /// `IS_IN`, `EXISTS`, `BEGINS_WITH`, ... as the match takes.
    pub match_criteria: MatchCriteria,
    /// `ALLOW` or `CLOSE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_or_close_connection_action: Option<String>,
    /// Redirect plain HTTP to HTTPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_to_https_action: Option<RedirectToHttpsAction>,
    /// Answer with a status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_response_action: Option<LocalResponseAction>,
    /// A per-client rate limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_action: Option<RateLimitAction>,
}

/// One of a virtual service's three lists, whole.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleList {
    /// `requestRules`.
    Request(Vec<RequestRule>),
    /// `responseRules`.
    Response(Vec<ResponseRule>),
    /// `securityRules`.
    Security(Vec<SecurityRule>),
}

/// Which list: the last segment of its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleKind {
    /// `requestRules`.
    Request,
    /// `responseRules`.
    Response,
    /// `securityRules`.
    Security,
}

impl RuleKind {
    /// The three lists, in the order they are written.
    pub const ALL: [RuleKind; 3] = [Self::Request, Self::Response, Self::Security];

    /// The path segment, also the list's name in messages.
    pub fn segment(self) -> &'static str {
        match self {
            Self::Request => "requestRules",
            Self::Response => "responseRules",
            Self::Security => "securityRules",
        }
    }
}

impl RuleList {
    /// Which list this is.
    pub fn kind(&self) -> RuleKind {
        match self {
            Self::Request(_) => RuleKind::Request,
            Self::Response(_) => RuleKind::Response,
            Self::Security(_) => RuleKind::Security,
        }
    }

    /// The body VCD takes: `{"values": [...]}`.
    fn body(&self, call: &crate::vcd::errors::CallSite, vs: &str) -> Result<String, VcdError> {
        let what = self.kind().segment();
        match self {
            Self::Request(values) => encode(
                call,
                what,
                vs,
                &Values {
                    values: values.clone(),
                },
            ),
            Self::Response(values) => encode(
                call,
                what,
                vs,
                &Values {
                    values: values.clone(),
                },
            ),
            Self::Security(values) => encode(
                call,
                what,
                vs,
                &Values {
                    values: values.clone(),
                },
            ),
        }
    }
}

/// A virtual service's HTTP request, response and security rules. Made by [`VcdClient::http_policies`].
#[derive(Clone, Copy)]
pub struct HttpPolicies<'c> {
    pub(super) client: &'c VcdClient,
}

impl HttpPolicies<'_> {
    /// The virtual service's list of `kind`.
    #[tracing::instrument(name = "http_rules", skip(self))]
    pub async fn rules(&self, vs_id: &str, kind: RuleKind) -> Result<RuleList, VcdError> {
        let path = format!("{SERVICES}/{vs_id}/httpPolicy/{}", kind.segment());
        let request = || ApiRequest::get("get_http_rules", path.clone());
        Ok(match kind {
            RuleKind::Request => {
                RuleList::Request(self.client.fetch::<Values<_>>(request()).await?.values)
            }
            RuleKind::Response => {
                RuleList::Response(self.client.fetch::<Values<_>>(request()).await?.values)
            }
            RuleKind::Security => {
                RuleList::Security(self.client.fetch::<Values<_>>(request()).await?.values)
            }
        })
    }

    /// Replaces the virtual service's list of `rules`' kind with `rules`.
    #[tracing::instrument(name = "put_http_rules", skip(self, rules), fields(kind = rules.kind().segment()))]
    pub async fn put_rules(
        &self,
        gateway_id: &str,
        vs_id: &str,
        vs_name: &str,
        rules: &RuleList,
    ) -> Result<(), VcdError> {
        let path = format!("{SERVICES}/{vs_id}/httpPolicy/{}", rules.kind().segment());
        let body = rules.body(&self.client.call_of("put_http_rules", &path), vs_name)?;
        let request = ApiRequest::new("put_http_rules", Method::PUT, &path).encoded(body);
        write_on_gateway(self.client, gateway_id, request)
            .await
            .map(|_| ())
    }
}

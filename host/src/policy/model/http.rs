//! HTTP rules of a port: what a policy may ask the load balancer to do to
//! requests and responses (VCD's HTTP policies, API 38.0). Contract 0.3.0.
//! The host turns them into VCD's request, response and security rules
//! (`lb/http_rules.rs`).

use serde::{Deserialize, Serialize};
use wasmtime::component::{ComponentType, Lift, Lower};

use super::scalars::wit_enum;

wit_enum!(
    /// How a text is compared with the values of a [`TextMatch`]; sent to
    /// VCD in upper case (`BEGINS_WITH`).
    TextCriteria {
        /// Starts with a value.
        BeginsWith = "begins-with",
        /// Starts with none of the values.
        DoesNotBeginWith = "does-not-begin-with",
        /// Contains a value.
        Contains = "contains",
        /// Contains none of the values.
        DoesNotContain = "does-not-contain",
        /// Ends with a value.
        EndsWith = "ends-with",
        /// Ends with none of the values.
        DoesNotEndWith = "does-not-end-with",
        /// Equals a value.
        Equals = "equals",
        /// Equals none of the values.
        DoesNotEqual = "does-not-equal",
        /// Matches a regular expression.
        RegexMatch = "regex-match",
        /// Matches none of the regular expressions.
        RegexDoesNotMatch = "regex-does-not-match",
    }
);
wit_enum!(
    /// An HTTP request method.
    HttpMethod {
        /// `GET`.
        Get = "get",
        /// `HEAD`.
        Head = "head",
        /// `POST`.
        Post = "post",
        /// `PUT`.
        Put = "put",
        /// `DELETE`.
        Delete = "delete",
        /// `OPTIONS`.
        Options = "options",
        /// `TRACE`.
        Trace = "trace",
        /// `CONNECT`.
        Connect = "connect",
        /// `PATCH`.
        Patch = "patch",
    }
);
wit_enum!(
    /// The status of a redirect.
    RedirectCode {
        /// 301.
        MovedPermanently = "moved-permanently",
        /// 302.
        Found = "found",
        /// 307.
        TemporaryRedirect = "temporary-redirect",
    }
);
wit_enum!(
    /// An HTTP scheme.
    Scheme {
        /// `http`.
        Http = "http",
        /// `https`.
        Https = "https",
    }
);

impl RedirectCode {
    /// The HTTP status.
    pub fn status(self) -> u16 {
        match self {
            Self::MovedPermanently => 301,
            Self::Found => 302,
            Self::TemporaryRedirect => 307,
        }
    }
}

/// A text matched against one or more values.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TextMatch {
    /// How the text is compared.
    pub criteria: TextCriteria,
    /// What it is compared with: 1 to 16 values.
    pub values: Vec<String>,
}

/// A request header: present (`value` none) or with a matching value.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct HeaderMatch {
    /// The header's name.
    pub name: String,
    /// What its value must match; `None`: the header is present.
    #[serde(default)]
    pub value: Option<TextMatch>,
}

/// Which requests a rule applies to; every part given must hold.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct HttpMatch {
    /// Client addresses or CIDRs; empty: any client.
    #[component(name = "client-addresses")]
    pub client_addresses: Vec<String>,
    /// The client must be outside `client_addresses` instead.
    #[component(name = "client-addresses-excluded")]
    pub client_addresses_excluded: bool,
    /// Methods; empty: any.
    pub methods: Vec<HttpMethod>,
    /// The request's path.
    pub path: Option<TextMatch>,
    /// Request headers, all of which must match.
    pub headers: Vec<HeaderMatch>,
}

/// A header and its value.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Header {
    /// The header's name.
    pub name: String,
    /// Its value.
    pub value: String,
}

/// A change to headers.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum HeaderAction {
    /// Adds the header beside any of the same name.
    #[component(name = "add")]
    Add(Header),
    /// Sets the header, replacing any of the same name.
    #[component(name = "replace")]
    Replace(Header),
    /// Removes every header of this name.
    #[component(name = "remove")]
    Remove(String),
}

/// Where a redirect sends the client.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Redirect {
    /// The scheme; `None`: the request's.
    #[serde(default)]
    pub scheme: Option<Scheme>,
    /// The host; `None`: the request's.
    #[serde(default)]
    pub host: Option<String>,
    /// The port; `None`: the request's.
    #[serde(default)]
    pub port: Option<u16>,
    /// The path, starting with `/`; `None`: the request's.
    #[serde(default)]
    pub path: Option<String>,
    /// The request's query string is kept.
    #[component(name = "keep-query")]
    #[serde(default)]
    pub keep_query: bool,
    /// The redirect's status.
    pub code: RedirectCode,
}

/// A change to the request's URL before it reaches the pool.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct UrlRewrite {
    /// The new `Host` header.
    pub host: Option<String>,
    /// The new path, starting with `/`.
    pub path: Option<String>,
    /// The request's query string is kept.
    #[component(name = "keep-query")]
    pub keep_query: bool,
}

/// Header changes and a URL rewrite.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct RequestModification {
    /// Header changes, in order.
    pub headers: Vec<HeaderAction>,
    /// A URL rewrite.
    pub rewrite: Option<UrlRewrite>,
}

/// What a request rule does.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum RequestAction {
    /// Changes the request and passes it on.
    #[component(name = "modify")]
    Modify(RequestModification),
    /// Answers with a redirect.
    #[component(name = "redirect")]
    Redirect(Redirect),
}

/// A rule applied to requests.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RequestRule {
    /// Unique within the port's request rules.
    pub name: String,
    /// Which requests it applies to.
    #[serde(default)]
    pub when: HttpMatch,
    /// What it does.
    pub action: RequestAction,
}

/// A rule applied to the responses to matching requests.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ResponseRule {
    /// Unique within the port's response rules.
    pub name: String,
    /// The requests whose responses it applies to.
    #[serde(default)]
    pub when: HttpMatch,
    /// Header changes, in order.
    pub headers: Vec<HeaderAction>,
}

/// What happens to requests over a rate limit.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum RateLimitAction {
    /// Closes the connection.
    #[component(name = "close")]
    Close,
    /// Answers with this status.
    #[component(name = "respond")]
    Respond(u16),
    /// Redirects the client.
    #[component(name = "redirect")]
    Redirect(Redirect),
}

/// `requests` per `period_seconds` per client, then `then`.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct RateLimit {
    /// Requests allowed per period.
    pub requests: u32,
    /// The period, in seconds.
    #[component(name = "period-seconds")]
    pub period_seconds: u32,
    /// What requests over the limit get.
    pub then: RateLimitAction,
}

/// What a security rule does.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(variant)]
#[serde(rename_all = "kebab-case")]
pub enum SecurityAction {
    /// Lets matching requests through.
    #[component(name = "allow")]
    Allow,
    /// Closes the connection.
    #[component(name = "close")]
    Close,
    /// Redirects plain HTTP to HTTPS on this port.
    #[component(name = "redirect-to-https")]
    RedirectToHttps(u16),
    /// Answers with this status.
    #[component(name = "respond")]
    Respond(u16),
    /// Limits each client's request rate.
    #[component(name = "rate-limit")]
    RateLimit(RateLimit),
}

/// A rule applied before request rules.
#[derive(ComponentType, Lift, Lower, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SecurityRule {
    /// Unique within the port's security rules.
    pub name: String,
    /// Which requests it applies to.
    #[serde(default)]
    pub when: HttpMatch,
    /// What it does.
    pub action: SecurityAction,
}

/// The HTTP rules of one port, each list in the order it applies.
#[derive(ComponentType, Lift, Lower, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[component(record)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct HttpRules {
    /// Request rules.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub request: Vec<RequestRule>,
    /// Response rules.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub response: Vec<ResponseRule>,
    /// Security rules.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub security: Vec<SecurityRule>,
}

impl HttpRules {
    /// No rule in any list.
    pub fn is_empty(&self) -> bool {
        self.request.is_empty() && self.response.is_empty() && self.security.is_empty()
    }
}

//! One repository's HTTP session: requests to `/v2/<repository>/…`, the
//! registry's authentication challenge answered once (Basic, or a Bearer
//! token from the realm it names), and bodies read under a limit.

use std::time::Duration;

use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{RequestBuilder, Response, StatusCode};
use serde::Deserialize;

use super::auth::Credentials;
use super::errors::{RegistryError, registry_text};
use super::reference::Reference;

/// The most read of a token service's answer or of an error body.
const SMALL_BODY_BYTES: u64 = 64 << 10;
/// A connection that takes longer than this is unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time for one request, a 64 MiB layer on a slow link included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(300);

/// What the session will do in the repository: the scope of a Bearer token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read manifests and blobs.
    Pull,
    /// Read and write them.
    Push,
}

impl Access {
    fn actions(self) -> &'static str {
        match self {
            Access::Pull => "pull",
            Access::Push => "pull,push",
        }
    }
}

/// Requests to one repository of one registry.
pub struct Session {
    http: reqwest::Client,
    reference: Reference,
    credentials: Option<Credentials>,
    access: Access,
    /// The `Authorization` value the registry accepted, once challenged.
    authorization: Option<HeaderValue>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
}

impl Session {
    /// A session for `reference`'s repository; nothing is sent yet.
    pub fn new(
        reference: &Reference,
        credentials: Option<Credentials>,
        access: Access,
    ) -> Result<Session, RegistryError> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("vcd-ccm/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| RegistryError::unreachable(&reference.registry, e))?;
        Ok(Session {
            http,
            reference: reference.clone(),
            credentials,
            access,
            authorization: None,
        })
    }

    /// The repository, as `registry/repository`, for messages.
    pub fn repository(&self) -> String {
        format!("{}/{}", self.reference.registry, self.reference.repository)
    }

    /// `<base>/v2/<repository>/<path>`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "{}/v2/{}/{path}",
            self.reference.base_url(),
            self.reference.repository
        )
    }

    /// An absolute URL for a `Location` the registry answered, which may be
    /// relative to the registry.
    pub fn resolve(&self, location: &str) -> String {
        if location.starts_with("http://") || location.starts_with("https://") {
            location.to_string()
        } else {
            format!("{}{location}", self.reference.base_url())
        }
    }

    /// Sends the request `build` makes, answering an authentication
    /// challenge once; a 401 or 403 after that is [`RegistryError::Unauthorized`].
    pub async fn send(
        &mut self,
        build: impl Fn(&reqwest::Client) -> RequestBuilder,
    ) -> Result<Response, RegistryError> {
        let response = self.send_once(&build).await?;
        if response.status() != StatusCode::UNAUTHORIZED || self.authorization.is_some() {
            return self.refuse_unauthorized(response).await;
        }
        let challenge = response
            .headers()
            .get(WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let Some(authorization) = self.answer(&challenge).await? else {
            return self.refuse_unauthorized(response).await;
        };
        self.authorization = Some(authorization);
        let response = self.send_once(&build).await?;
        self.refuse_unauthorized(response).await
    }

    async fn send_once(
        &self,
        build: &impl Fn(&reqwest::Client) -> RequestBuilder,
    ) -> Result<Response, RegistryError> {
        let mut request = build(&self.http);
        if let Some(authorization) = &self.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        request
            .send()
            .await
            .map_err(|e| RegistryError::unreachable(&self.reference.registry, e))
    }

    async fn refuse_unauthorized(&self, response: Response) -> Result<Response, RegistryError> {
        let status = response.status();
        if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
            return Ok(response);
        }
        Err(RegistryError::Unauthorized {
            registry: self.reference.registry.clone(),
            repository: self.reference.repository.clone(),
            status: status.as_u16(),
            with_credentials: self.credentials.is_some(),
            message: error_text(response).await,
        })
    }

    /// The `Authorization` that answers `challenge`; `None` when it cannot be
    /// answered (Basic without credentials, an unknown scheme).
    async fn answer(&self, challenge: &str) -> Result<Option<HeaderValue>, RegistryError> {
        let (scheme, parameters) = challenge.split_once(' ').unwrap_or((challenge, ""));
        if scheme.eq_ignore_ascii_case("basic") {
            return Ok(self.credentials.as_ref().map(basic));
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Ok(None);
        }
        let parameters = challenge_parameters(parameters);
        let parameter = |name: &str| {
            parameters
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(name))
                .map(|(_, value)| value.as_str())
        };
        let token_error = |message: String| RegistryError::Token {
            registry: self.reference.registry.clone(),
            message: registry_text(&message),
        };
        let realm = parameter("realm")
            .ok_or_else(|| token_error("the Bearer challenge names no realm".into()))?;
        // Credentials go to the realm only as safely as to the registry.
        if !realm.starts_with("https://") && !self.reference.is_loopback() {
            return Err(token_error(format!("realm {realm} is not HTTPS")));
        }
        let scope = format!(
            "repository:{}:{}",
            self.reference.repository,
            self.access.actions()
        );
        let mut query = vec![("scope", scope)];
        if let Some(service) = parameter("service") {
            query.push(("service", service.to_string()));
        }
        let mut request = self.http.get(realm).query(&query);
        if let Some(credentials) = &self.credentials {
            request = request.header(AUTHORIZATION, basic(credentials));
        }
        let response = request
            .send()
            .await
            .map_err(|e| RegistryError::unreachable(&self.reference.registry, e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(RegistryError::Unauthorized {
                registry: self.reference.registry.clone(),
                repository: self.reference.repository.clone(),
                status: status.as_u16(),
                with_credentials: self.credentials.is_some(),
                message: format!("token service: {}", error_text(response).await),
            });
        }
        let body = read_limited(response, "the token service's answer", SMALL_BODY_BYTES).await?;
        let answer: TokenAnswer = serde_json::from_slice(&body)
            .map_err(|e| token_error(format!("not a token answer: {e}")))?;
        let token = answer
            .token
            .or(answer.access_token)
            .ok_or_else(|| token_error("the answer holds no token".into()))?;
        HeaderValue::from_str(&format!("Bearer {token}"))
            .map(|mut value| {
                value.set_sensitive(true);
                Some(value)
            })
            .map_err(|_| token_error("the token is not a header value".into()))
    }
}

fn basic(credentials: &Credentials) -> HeaderValue {
    let encoded = base64::engine::general_purpose::STANDARD
        .encode(format!("{}:{}", credentials.username, credentials.password));
    let mut value =
        HeaderValue::from_str(&format!("Basic {encoded}")).expect("base64 is a header value");
    value.set_sensitive(true);
    value
}

/// `realm="https://auth",service="registry",scope="a:b:pull,push"` as pairs;
/// commas inside quotes belong to the value.
fn challenge_parameters(text: &str) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    let mut rest = text.trim();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().trim_start_matches(',').trim().to_string();
        let (value, remaining) = match after.strip_prefix('"') {
            Some(quoted) => match quoted.split_once('"') {
                Some((value, remaining)) => (value, remaining),
                None => (quoted, ""),
            },
            None => after.split_once(',').unwrap_or((after, "")),
        };
        pairs.push((key, value.to_string()));
        rest = remaining.trim_start_matches([',', ' ']);
    }
    pairs
}

/// Reads the body, refusing more than `limit` bytes (declared or sent).
pub async fn read_limited(
    mut response: Response,
    what: &str,
    limit: u64,
) -> Result<Vec<u8>, RegistryError> {
    let too_large = |size: u64| RegistryError::TooLarge {
        what: what.to_string(),
        size,
        limit,
    };
    if let Some(declared) = response.content_length()
        && declared > limit
    {
        return Err(too_large(declared));
    }
    let mut body = Vec::with_capacity(response.content_length().unwrap_or(0) as usize);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| RegistryError::Protocol {
            what: what.to_string(),
            message: registry_text(&format!("the body broke off: {e}")),
        })?
    {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > limit {
            return Err(too_large(body.len() as u64));
        }
    }
    Ok(body)
}

/// The registry's error text: the `errors[].message` of a distribution
/// error body, else the body, escaped and bounded.
pub async fn error_text(response: Response) -> String {
    #[derive(Deserialize)]
    struct Errors {
        errors: Vec<ErrorEntry>,
    }
    #[derive(Deserialize)]
    struct ErrorEntry {
        #[serde(default)]
        code: String,
        #[serde(default)]
        message: String,
    }
    let status = response.status();
    let body = read_limited(response, "error", SMALL_BODY_BYTES)
        .await
        .unwrap_or_default();
    let text = match serde_json::from_slice::<Errors>(&body) {
        Ok(errors) if !errors.errors.is_empty() => errors
            .errors
            .iter()
            .map(|e| format!("{} {}", e.code, e.message).trim().to_string())
            .collect::<Vec<_>>()
            .join("; "),
        _ => String::from_utf8_lossy(&body).into_owned(),
    };
    let text = registry_text(&text);
    if text.is_empty() {
        status
            .canonical_reason()
            .unwrap_or("no message")
            .to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_parameters_keep_commas_inside_quotes() {
        let pairs = challenge_parameters(
            r#"realm="https://auth.example.com/token",service="registry.example.com",scope="repository:p:pull,push""#,
        );
        assert_eq!(
            pairs,
            [
                (
                    "realm".to_string(),
                    "https://auth.example.com/token".to_string()
                ),
                ("service".to_string(), "registry.example.com".to_string()),
                ("scope".to_string(), "repository:p:pull,push".to_string()),
            ]
        );
    }

    #[test]
    fn basic_authorization_is_sensitive() {
        let value = basic(&Credentials {
            username: "u".into(),
            password: "p".into(),
        });
        assert!(value.is_sensitive());
        assert_eq!(value.to_str().unwrap(), "Basic dTpw");
    }
}

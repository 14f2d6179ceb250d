//! Logins and the access-token cache. One token serves every request until
//! shortly before it expires, until VCD rejects it (401), or until the
//! credential files change; then exactly one caller logs in again while the
//! others wait for its result (the session lock is held across the login).
//! A one-time refresh token (a service account's) goes through the
//! [`Rotation`], which stores each new one before its access token is used.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use reqwest::Method;
use reqwest::header::{ACCEPT, AUTHORIZATION, HeaderValue};
use serde::Deserialize;
use tokio::sync::Mutex;

use super::credentials::{CredentialSource, Credentials, Fingerprint};
use super::errors::{CallSite, VcdError};
use super::retry::{Idempotency, RetryPolicy, with_retries};
use super::rotation::Rotation;
use super::secret::Secret;
use super::transport::{BodyKind, Transport};
use super::version::ApiVersion;

/// A token handed to one request. `generation` tells a rejected token from
/// a newer one, so concurrent 401s lead to a single login.
#[derive(Debug, Clone)]
pub struct Token {
    pub value: Secret,
    pub generation: u64,
    /// A System-org (provider) session, which needs the tenant-context header.
    pub system: bool,
}

#[derive(Debug)]
struct Session {
    token: Token,
    /// When to log in again: the expiry minus the refresh margin.
    renew_at: Option<Instant>,
    fingerprint: Fingerprint,
}

#[derive(Debug)]
pub struct Authenticator {
    source: CredentialSource,
    margin: Duration,
    retry: RetryPolicy,
    rotation: Option<Arc<Rotation>>,
    session: Mutex<Option<Session>>,
}

#[derive(Deserialize)]
struct OAuthToken {
    access_token: Secret,
    expires_in: Option<u64>,
    /// A service account's next refresh token; `null` for a user's API token.
    #[serde(default)]
    refresh_token: Option<Secret>,
}

fn sensitive(value: String) -> Result<HeaderValue, VcdError> {
    let mut header = HeaderValue::from_str(&value).map_err(|_| {
        VcdError::Credentials(
            "a credential holds characters not allowed in an HTTP header".to_string(),
        )
    })?;
    header.set_sensitive(true);
    Ok(header)
}

impl Authenticator {
    pub fn new(source: CredentialSource, margin: Duration, retry: RetryPolicy) -> Self {
        Self {
            source,
            margin,
            retry,
            rotation: None,
            session: Mutex::new(None),
        }
    }

    /// Refresh tokens go through `rotation`: see [`Rotation`].
    pub fn with_rotation(mut self, rotation: Option<Arc<Rotation>>) -> Self {
        self.rotation = rotation;
        self
    }

    /// Whether the credential files changed in a way that needs a login:
    /// not when they only caught up with a refresh token this process stored.
    fn files_changed(&self, session: &mut Session) -> bool {
        let now = self.source.fingerprint();
        if session.fingerprint == now {
            return false;
        }
        if let (Some(rotation), Ok(Credentials::ApiToken { token, .. })) =
            (&self.rotation, self.source.load())
            && rotation.knows(&token)
        {
            session.fingerprint = now;
            return false;
        }
        true
    }

    /// The cached token, after logging in when there is none, it is about to
    /// expire, or the credential files changed.
    pub async fn token(
        &self,
        transport: &Transport,
        version: ApiVersion,
    ) -> Result<Token, VcdError> {
        let mut session = self.session.lock().await;
        let generation = session.as_ref().map_or(0, |s| s.token.generation);
        let reason = match session.as_mut() {
            None => Some("initial"),
            Some(s) if s.renew_at.is_some_and(|at| Instant::now() >= at) => Some("expiring"),
            Some(s) => self.files_changed(s).then_some("credentials_changed"),
        };
        if let Some(reason) = reason {
            *session = Some(
                self.login(transport, version, reason, generation + 1)
                    .await?,
            );
        }
        session
            .as_ref()
            .map(|s| s.token.clone())
            .ok_or_else(|| VcdError::Credentials("no session after login".to_string()))
    }

    /// Called after VCD answered 401 to `rejected`: logs in again unless
    /// another caller already replaced that token.
    pub async fn refresh_rejected(
        &self,
        transport: &Transport,
        version: ApiVersion,
        rejected: &Token,
    ) -> Result<Token, VcdError> {
        let mut session = self.session.lock().await;
        match session.as_ref() {
            Some(current) if current.token.generation != rejected.generation => {
                return Ok(current.token.clone());
            }
            _ => {}
        }
        let next = self
            .login(transport, version, "rejected", rejected.generation + 1)
            .await?;
        let token = next.token.clone();
        *session = Some(next);
        Ok(token)
    }

    async fn login(
        &self,
        transport: &Transport,
        version: ApiVersion,
        reason: &'static str,
        generation: u64,
    ) -> Result<Session, VcdError> {
        let fingerprint = self.source.fingerprint();
        let credentials = self.source.load()?;
        transport.metrics.token_refresh(reason);
        tracing::info!(
            reason,
            org = credentials.org(),
            system = credentials.is_system(),
            "logging in to VCD"
        );
        let system = credentials.is_system();
        let (value, lifetime) = with_retries(
            &self.retry,
            &transport.metrics,
            "login",
            Idempotency::Idempotent,
            || self.login_once(transport, version, &credentials),
        )
        .await?;
        let renew_at = lifetime.map(|lifetime| {
            let margin = self.margin.min(lifetime / 10);
            Instant::now() + lifetime - margin
        });
        Ok(Session {
            token: Token {
                value,
                generation,
                system,
            },
            renew_at,
            fingerprint,
        })
    }

    /// One login request: the refresh-token grant, or a Basic session.
    async fn login_once(
        &self,
        transport: &Transport,
        version: ApiVersion,
        credentials: &Credentials,
    ) -> Result<(Secret, Option<Duration>), VcdError> {
        match credentials {
            Credentials::ApiToken { org, token } => {
                let path = if credentials.is_system() {
                    "/oauth/provider/token".to_string()
                } else {
                    format!("/oauth/tenant/{org}/token")
                };
                match &self.rotation {
                    Some(rotation) => {
                        rotation
                            .exchange(|stored| exchange(transport, path, stored))
                            .await
                    }
                    None => exchange(transport, path, token.clone())
                        .await
                        .map(|(access, lifetime, _)| (access, lifetime)),
                }
            }
            Credentials::Password {
                org,
                user,
                password,
            } => {
                let path = if credentials.is_system() {
                    "/cloudapi/1.0.0/sessions/provider"
                } else {
                    "/cloudapi/1.0.0/sessions"
                };
                let call = CallSite::new("login", Method::POST, path.to_string());
                let basic = BASE64.encode(format!("{user}@{org}:{}", password.expose()));
                let request = transport
                    .http
                    .post(transport.url(path))
                    .header(ACCEPT, format!("application/*;version={version}"))
                    .header(AUTHORIZATION, sensitive(format!("Basic {basic}"))?);
                let reply = transport.send(&call, request, BodyKind::Object).await?;
                let token = reply
                    .header("x-vmware-vcloud-access-token")
                    .map(Secret::from)
                    .ok_or_else(|| VcdError::Unexpected {
                        call,
                        detail: "the session answer has no X-VMWARE-VCLOUD-ACCESS-TOKEN header"
                            .to_string(),
                    })?;
                // Sessions carry no expiry; a 401 tells us when they end.
                Ok((token, None))
            }
        }
    }
}

/// The refresh-token grant at `path`: the access token, its lifetime, and
/// the refresh token VCD answered (a service account's next one).
async fn exchange(
    transport: &Transport,
    path: String,
    token: Secret,
) -> Result<(Secret, Option<Duration>, Option<Secret>), VcdError> {
    let call = CallSite::new("login", Method::POST, path.clone());
    let request = transport
        .http
        .post(transport.url(&path))
        .header(ACCEPT, "application/json")
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", token.expose()),
        ]);
    let reply = transport.send(&call, request, BodyKind::Object).await?;
    let parsed: OAuthToken =
        serde_json::from_slice(&reply.body).map_err(|error| VcdError::Unexpected {
            call,
            detail: format!("the token answer is not an OAuth token: {error}"),
        })?;
    Ok((
        parsed.access_token,
        parsed.expires_in.map(Duration::from_secs),
        parsed.refresh_token,
    ))
}

/// `Authorization: Bearer <token>`, marked sensitive.
pub fn bearer(token: &Token) -> Result<HeaderValue, VcdError> {
    sensitive(format!("Bearer {}", token.value.expose()))
}

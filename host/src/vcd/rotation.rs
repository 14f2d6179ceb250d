//! One-time refresh tokens (VCD service accounts). Each exchange at the
//! token endpoint answers a new `refresh_token` and voids the one sent, so
//! the new one must be stored before the access token is relied on, and
//! only one process may exchange at a time.
//!
//! With a [`Rotation`] configured, every exchange of a refresh token:
//! happens only while this process leads (standbys never exchange); first
//! reads the token from its [`TokenStore`] (the credential Secret through the
//! Kubernetes API, not the lagging mounted file), which also fences a
//! leader that lost the API server; and, when VCD answers a refresh token
//! other than the one sent, writes it to the store at once, with nothing
//! else awaited between VCD's answer and the write. A write that fails keeps
//! the new token in memory, drops the access token, and is retried before
//! any further exchange. Tokens VCD answers with `refresh_token: null` (a
//! user's reusable API token) are never written.
//!
//! If the process dies after VCD answered and before the write landed, the
//! used token is void and the new one is lost: an org administrator must
//! issue a new token. The window is one Kubernetes write.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::watch;

use super::errors::VcdError;
use super::secret::Secret;

/// Tried this many times, with growing pauses, before a write gives up.
const WRITE_ATTEMPTS: u32 = 5;
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// How many tokens of this process are remembered, to tell our own writes
/// coming back through the mounted file from an administrator's.
const REMEMBERED: usize = 8;

/// Where the refresh token lives for every replica.
pub trait TokenStore: Send + Sync {
    /// What to name it in logs and Events, e.g. `Secret kube-system/vcloud-basic-auth`.
    fn name(&self) -> &str;
    /// The stored token and the version a write must match.
    fn read(&self) -> BoxFuture<'_, Result<Stored, StoreError>>;
    /// Replaces the token if the store is still at `version`; answers the new version.
    fn write<'a>(
        &'a self,
        token: &'a Secret,
        version: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>>;
}

/// A [`TokenStore`] whose reads and writes finish without waiting (a file,
/// memory): it implements these two, and is a `TokenStore` by them.
pub trait LocalTokenStore: Send + Sync {
    /// As [`TokenStore::name`].
    fn name(&self) -> &str;
    /// As [`TokenStore::read`].
    fn read_now(&self) -> Result<Stored, StoreError>;
    /// As [`TokenStore::write`].
    fn write_now(&self, token: &Secret, version: &str) -> Result<String, StoreError>;
}

impl<T: LocalTokenStore> TokenStore for T {
    fn name(&self) -> &str {
        LocalTokenStore::name(self)
    }

    fn read(&self) -> BoxFuture<'_, Result<Stored, StoreError>> {
        std::future::ready(self.read_now()).boxed()
    }

    fn write<'a>(
        &'a self,
        token: &'a Secret,
        version: &'a str,
    ) -> BoxFuture<'a, Result<String, StoreError>> {
        std::future::ready(self.write_now(token, version)).boxed()
    }
}

/// What [`TokenStore::read`] found.
#[derive(Debug, Clone)]
pub struct Stored {
    /// `None` when the store holds no (or an empty) token.
    pub token: Option<Secret>,
    /// Its version (a resourceVersion), the precondition of the next write.
    pub version: String,
}

/// Why a store read or write failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store changed since it was read.
    #[error("it changed since it was read")]
    Conflict,
    /// Anything else; the text never holds the token.
    #[error("{0}")]
    Failed(String),
}

/// What VCD last said of the stored token, for `/readyz` and Events.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TokenHealth {
    /// Not exchanged yet by this process.
    #[default]
    Unknown,
    /// The last exchange worked.
    Accepted,
    /// VCD refused it; the text says why, never the token.
    Refused(String),
}

/// A new token VCD answered that is not stored yet.
struct Pending {
    new: Secret,
    sent: Secret,
    version: String,
}

#[derive(Default)]
struct State {
    pending: Option<Pending>,
    /// The latest tokens this process sent or stored.
    known: Vec<Secret>,
}

/// The rotation of one-time refresh tokens; see the module's documentation.
pub struct Rotation {
    store: Arc<dyn TokenStore>,
    leading: watch::Receiver<bool>,
    state: Mutex<State>,
    health: watch::Sender<TokenHealth>,
}

impl std::fmt::Debug for Rotation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rotation")
            .field("store", &self.store.name())
            .finish_non_exhaustive()
    }
}

impl Rotation {
    /// Exchanges only while `leading` holds `true`.
    pub fn new(store: Arc<dyn TokenStore>, leading: watch::Receiver<bool>) -> Self {
        Self {
            store,
            leading,
            state: Mutex::default(),
            health: watch::Sender::new(TokenHealth::Unknown),
        }
    }

    /// The store's name, as logs and Events show it.
    pub fn store_name(&self) -> &str {
        self.store.name()
    }

    /// Follows what VCD says of the token.
    pub fn health(&self) -> watch::Receiver<TokenHealth> {
        self.health.subscribe()
    }

    /// Whether `token` is one this process sent or stored: the mounted file
    /// catching up with our own write is no reason to log in again.
    pub fn knows(&self, token: &Secret) -> bool {
        self.lock().known.iter().any(|known| known == token)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn remember(&self, token: &Secret) {
        let mut state = self.lock();
        if !state.known.contains(token) {
            state.known.push(token.clone());
        }
        let excess = state.known.len().saturating_sub(REMEMBERED);
        state.known.drain(..excess);
    }

    /// One exchange of the stored token through `exchange`, which answers
    /// the access token, its lifetime and VCD's `refresh_token`.
    pub(super) async fn exchange<F, Fut>(
        &self,
        exchange: F,
    ) -> Result<(Secret, Option<Duration>), VcdError>
    where
        F: FnOnce(Secret) -> Fut,
        Fut: Future<Output = Result<(Secret, Option<Duration>, Option<Secret>), VcdError>>,
    {
        if !*self.leading.borrow() {
            return Err(VcdError::Credentials(
                "a standby does not exchange the refresh token; the leader does".to_string(),
            ));
        }
        let pending = self.lock().pending.take();
        if let Some(pending) = pending {
            self.store_new(pending).await?;
        }
        let name = self.store.name();
        let stored = self
            .store
            .read()
            .await
            .map_err(|error| VcdError::Credentials(format!("cannot read {name}: {error}")))?;
        let sent = stored.token.clone().ok_or_else(|| {
            VcdError::Credentials(format!("{name} holds no refreshToken any more"))
        })?;
        self.remember(&sent);
        let answer = exchange(sent.clone()).await;
        let (access, lifetime, next) = match answer {
            Ok(answer) => answer,
            Err(error) => {
                if refused(&error) {
                    self.refused(&error);
                }
                return Err(error);
            }
        };
        // Nothing but the write between VCD's answer and the store: the used
        // token is void now, and the new one exists only in this process.
        if let Some(new) = next.filter(|new| !new.is_empty() && *new != sent) {
            self.store_new(Pending {
                new,
                sent,
                version: stored.version,
            })
            .await?;
        }
        self.health.send_replace(TokenHealth::Accepted);
        Ok((access, lifetime))
    }

    fn refused(&self, error: &VcdError) {
        let name = self.store.name();
        tracing::error!(
            store = name,
            %error,
            "VCD refused the refresh token in {name}: a service account's token works once; an org administrator must issue a new one and write it to refreshToken there"
        );
        self.health
            .send_replace(TokenHealth::Refused(error.to_string()));
    }

    /// Writes `pending.new`, re-reading on a conflict. Another token found in
    /// the store then (an administrator's) is kept and ours dropped.
    async fn store_new(&self, mut pending: Pending) -> Result<(), VcdError> {
        let name = self.store.name();
        let mut pause = FIRST_PAUSE;
        let mut last = String::new();
        for attempt in 1..=WRITE_ATTEMPTS {
            match self.store.write(&pending.new, &pending.version).await {
                Ok(_) => {
                    tracing::info!(
                        store = name,
                        "stored the new one-time refresh token VCD answered"
                    );
                    self.remember(&pending.new);
                    return Ok(());
                }
                Err(StoreError::Conflict) => match self.store.read().await {
                    Ok(now) if now.token.as_ref() == Some(&pending.sent) => {
                        pending.version = now.version;
                        continue;
                    }
                    Ok(now) if now.token.as_ref() == Some(&pending.new) => return Ok(()),
                    Ok(_) => {
                        tracing::warn!(
                            store = name,
                            "{name} got another refresh token while this replica stored the one VCD answered; the other is kept"
                        );
                        return Ok(());
                    }
                    Err(error) => last = error.to_string(),
                },
                Err(StoreError::Failed(error)) => last = error,
            }
            tracing::warn!(store = name, attempt, error = %last, "cannot store the new refresh token yet");
            if attempt < WRITE_ATTEMPTS {
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
        }
        self.lock().pending = Some(pending);
        Err(VcdError::Credentials(format!(
            "the new refresh token VCD answered cannot be stored in {name} ({last}); it is kept in memory and stored before the next exchange"
        )))
    }
}

/// Whether VCD refused the token itself (OAuth `invalid_grant` is a 400).
fn refused(error: &VcdError) -> bool {
    matches!(
        error,
        VcdError::Unauthorized { .. } | VcdError::Forbidden { .. }
    ) || matches!(error, VcdError::Rejected { status, .. } if *status == 400)
}

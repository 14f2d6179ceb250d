//! The refresh token kept in this process alone, for `--credentials-secret
//! ""`: a service account's one-time token still rotates (each new one
//! replaces the one sent, in memory), so the process keeps working; a
//! restart then needs a new token from an org administrator. A token that
//! appears in the mounted credentials (an administrator's) replaces ours.

use std::sync::{Mutex, MutexGuard};

use super::credentials::{CredentialSource, Credentials};
use super::rotation::{LocalTokenStore, StoreError, Stored};
use super::secret::Secret;

/// A [`TokenStore`] in memory, seeded from the mounted credentials.
pub struct MemoryTokenStore {
    source: CredentialSource,
    state: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// The token the mounted credentials held when last read.
    mounted: Option<Secret>,
    /// The token to send next.
    token: Option<Secret>,
    version: u64,
}

impl MemoryTokenStore {
    /// Seeded from (and following) the refresh token `source` holds.
    pub fn new(source: CredentialSource) -> Self {
        Self {
            source,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl LocalTokenStore for MemoryTokenStore {
    fn name(&self) -> &str {
        "this process's memory (--credentials-secret is empty; the mounted refreshToken seeds it)"
    }

    fn read_now(&self) -> Result<Stored, StoreError> {
        let mounted = match self.source.load() {
            Ok(Credentials::ApiToken { token, .. }) => Some(token),
            Ok(Credentials::Password { .. }) => None,
            Err(error) => return Err(StoreError::Failed(error.to_string())),
        };
        let mut held = self.lock();
        if held.mounted != mounted {
            held.token = mounted.clone();
            held.mounted = mounted;
            held.version += 1;
        }
        Ok(Stored {
            token: held.token.clone(),
            version: held.version.to_string(),
        })
    }

    fn write_now(&self, token: &Secret, version: &str) -> Result<String, StoreError> {
        let mut held = self.lock();
        if held.version.to_string() != version {
            return Err(StoreError::Conflict);
        }
        held.token = Some(token.clone());
        held.version += 1;
        Ok(held.version.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(token: &str) -> (tempfile::TempDir, MemoryTokenStore) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("refreshToken"), token).unwrap();
        let source = CredentialSource::Files {
            dir: dir.path().to_path_buf(),
            user_org: "org1".into(),
        };
        (dir, MemoryTokenStore::new(source))
    }

    fn token(stored: &Stored) -> Option<&str> {
        stored.token.as_ref().map(Secret::expose)
    }

    #[test]
    fn new_tokens_replace_the_mounted_one_until_an_administrator_writes_another() {
        let (dir, store) = store("first");
        let seeded = store.read_now().unwrap();
        assert_eq!(token(&seeded), Some("first"));
        let version = store
            .write_now(&Secret::new("second"), &seeded.version)
            .unwrap();
        assert!(matches!(
            store.write_now(&Secret::new("stale"), &seeded.version),
            Err(StoreError::Conflict)
        ));
        let now = store.read_now().unwrap();
        assert_eq!(
            (token(&now), now.version.as_str()),
            (Some("second"), version.as_str())
        );
        // An administrator's token in the mounted Secret wins.
        std::fs::write(dir.path().join("refreshToken"), "issued").unwrap();
        assert_eq!(token(&store.read_now().unwrap()), Some("issued"));
    }
}

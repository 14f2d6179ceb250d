//! `vcd-ccm check` logging in with a refresh token: a service account's
//! token is one-time, so the check's own login voids the token in the
//! files it was given. The file `refreshToken` is the store the token
//! rotation writes the new one to (replaced whole, by rename), and a check
//! that could not store it does not log in at all.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::watch;

use crate::vcd::{LocalTokenStore, Rotation, Secret, StoreError, Stored};

const FILE: &str = "refreshToken";

/// The `refreshToken` file of a credentials directory as a [`TokenStore`];
/// its version is the token's own digest, so a file changed since it was
/// read is a conflict.
pub struct TokenFile {
    path: PathBuf,
    name: String,
}

fn digest(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

impl TokenFile {
    /// The token file of `credentials_dir` when it holds a refresh token.
    pub fn of(credentials_dir: &Path) -> Option<Self> {
        let path = credentials_dir.join(FILE);
        let text = std::fs::read_to_string(&path).ok()?;
        (!text.trim().is_empty()).then(|| Self {
            name: format!("file {}", path.display()),
            path,
        })
    }

    /// Why a new token could not be stored here, if it could not: a
    /// read-only mount, say. Checked before the login.
    pub fn unwritable(&self) -> Option<String> {
        let dir = self.path.parent()?;
        let probe = dir.join(".vcd-ccm-check-probe");
        match std::fs::write(&probe, b"") {
            Ok(()) => {
                let _ = std::fs::remove_file(&probe);
                None
            }
            Err(error) => Some(format!("{} is not writable: {error}", dir.display())),
        }
    }

    /// A rotation that always exchanges (the check runs alone) and stores
    /// what VCD answers into this file.
    pub fn rotation(self) -> Arc<Rotation> {
        let (_, leading) = watch::channel(true);
        Arc::new(Rotation::new(Arc::new(self), leading))
    }
}

impl LocalTokenStore for TokenFile {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_now(&self) -> Result<Stored, StoreError> {
        let text = std::fs::read_to_string(&self.path)
            .map_err(|e| StoreError::Failed(format!("cannot read {}: {e}", self.path.display())))?;
        let token = text.trim();
        Ok(Stored {
            version: digest(token),
            token: (!token.is_empty()).then(|| Secret::new(token.to_string())),
        })
    }

    fn write_now(&self, token: &Secret, version: &str) -> Result<String, StoreError> {
        if self.read_now()?.version != version {
            return Err(StoreError::Conflict);
        }
        let fresh = self.path.with_extension("new");
        let failed = |e: std::io::Error| {
            StoreError::Failed(format!("cannot write {}: {e}", self.path.display()))
        };
        std::fs::write(&fresh, format!("{}\n", token.expose())).map_err(failed)?;
        std::fs::rename(&fresh, &self.path).map_err(failed)?;
        Ok(digest(token.expose()))
    }
}

//! Where the client's credentials come from: values given directly, or the
//! files of the upstream credential Secret (`username`, `password`,
//! `refreshToken`), which are re-read whenever they change so a rotated
//! Secret takes effect without a restart.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::errors::VcdError;
use super::secret::Secret;

/// How to log in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// An API (refresh) token of a user of `org`: the OAuth refresh-token grant.
    ApiToken {
        /// The org of the token's user; `System` for a provider login.
        org: String,
        /// The API token, exchanged for short-lived access tokens.
        token: Secret,
    },
    /// `user@org` with a password: a Basic CloudAPI session.
    Password {
        /// The user's org; `System` for a provider login.
        org: String,
        /// The user's name, without `@org`.
        user: String,
        /// The user's password.
        password: Secret,
    },
}

impl Credentials {
    /// The org the user belongs to; `System` means a provider login.
    pub fn org(&self) -> &str {
        match self {
            Self::ApiToken { org, .. } | Self::Password { org, .. } => org,
        }
    }

    /// Whether this is a provider login: the org is `System`, in any letter case.
    pub fn is_system(&self) -> bool {
        self.org().eq_ignore_ascii_case("system")
    }
}

/// Where [`Credentials`] come from. They are read again at every login,
/// so a rotated Secret is picked up without a restart.
#[derive(Debug, Clone)]
pub enum CredentialSource {
    /// Fixed credentials, for tools and tests.
    Static(Credentials),
    /// The upstream Secret mounted as a directory. `user_org` is the org of a
    /// `username` without an `org/` prefix, and of a refresh token.
    Files {
        /// The directory the Secret is mounted at.
        dir: PathBuf,
        /// The org of a bare `username` and of a refresh token.
        user_org: String,
    },
}

/// Modification times and sizes of the credential files: a cheap way to
/// notice a rotated Secret.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint(Vec<Option<(SystemTime, u64)>>);

const FILES: [&str; 3] = ["username", "password", "refreshToken"];

impl CredentialSource {
    /// The files' modification times and sizes; a different fingerprint
    /// means the Secret changed. Always the same for [`CredentialSource::Static`].
    pub fn fingerprint(&self) -> Fingerprint {
        match self {
            Self::Static(_) => Fingerprint::default(),
            Self::Files { dir, .. } => Fingerprint(
                FILES
                    .iter()
                    .map(|name| {
                        let meta = std::fs::metadata(dir.join(name)).ok()?;
                        Some((meta.modified().ok()?, meta.len()))
                    })
                    .collect(),
            ),
        }
    }

    /// The credentials as they are now. Fails with
    /// [`VcdError::Credentials`] when a file cannot be read, or the files hold
    /// neither a refresh token nor both a username and a password.
    pub fn load(&self) -> Result<Credentials, VcdError> {
        match self {
            Self::Static(credentials) => Ok(credentials.clone()),
            Self::Files { dir, user_org } => from_files(dir, user_org),
        }
    }
}

fn read_trimmed(dir: &Path, name: &str) -> Result<Option<String>, VcdError> {
    match std::fs::read_to_string(dir.join(name)) {
        Ok(text) => Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(VcdError::Credentials(format!(
            "cannot read {}: {error}",
            dir.join(name).display()
        ))),
    }
}

/// A non-empty refresh token wins, as upstream; else `username` (`user` or
/// `org/user`) and `password`.
fn from_files(dir: &Path, user_org: &str) -> Result<Credentials, VcdError> {
    if let Some(token) = read_trimmed(dir, "refreshToken")? {
        return Ok(Credentials::ApiToken {
            org: user_org.to_string(),
            token: Secret::new(token),
        });
    }
    let username = read_trimmed(dir, "username")?;
    let password = read_trimmed(dir, "password")?;
    let (Some(username), Some(password)) = (username, password) else {
        return Err(VcdError::Credentials(format!(
            "{} holds neither a refreshToken nor both username and password",
            dir.display()
        )));
    };
    let (org, user) = match username.split_once('/') {
        Some((_, user)) if user.contains('/') => {
            return Err(VcdError::Credentials(format!(
                "the username in {} has more than one '/': expected 'user' or 'org/user'",
                dir.display()
            )));
        }
        Some((org, user)) => (org.to_string(), user.to_string()),
        None => (user_org.to_string(), username),
    };
    Ok(Credentials::Password {
        org,
        user,
        password: Secret::new(password),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_follow_the_upstream_layout() {
        let dir = tempfile::tempdir().unwrap();
        let source = CredentialSource::Files {
            dir: dir.path().to_path_buf(),
            user_org: "org1".to_string(),
        };
        assert!(matches!(source.load(), Err(VcdError::Credentials(_))));

        std::fs::write(dir.path().join("username"), "system/admin\n").unwrap();
        std::fs::write(dir.path().join("password"), "pw\n").unwrap();
        let loaded = source.load().unwrap();
        assert_eq!(
            loaded,
            Credentials::Password {
                org: "system".into(),
                user: "admin".into(),
                password: Secret::new("pw")
            }
        );
        assert!(loaded.is_system());

        let before = source.fingerprint();
        std::fs::write(dir.path().join("refreshToken"), "tok\n").unwrap();
        assert_ne!(source.fingerprint(), before);
        assert_eq!(
            source.load().unwrap(),
            Credentials::ApiToken {
                org: "org1".into(),
                token: Secret::new("tok")
            }
        );
    }
}

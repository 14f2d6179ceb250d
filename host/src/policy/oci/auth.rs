//! Registry credentials from a Docker `config.json`: the file of
//! `--registry-auth`, `$REGISTRY_AUTH_FILE` or `~/.docker/config.json` for
//! the command line, the `.dockerconfigjson` key of a
//! `kubernetes.io/dockerconfigjson` Secret for the CCM.
//!
//! Only `auths.<registry>.auth` (base64 of `user:password`) and
//! `auths.<registry>.username`/`password` are read; credential helpers
//! (`credsStore`, `credHelpers`) are not run.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

/// A user name and password for one registry. Never printed: `Debug`
/// shows the user only.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user name.
    pub username: String,
    /// The password or token.
    pub password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// Why a Docker config cannot be used. Messages name the file and the
/// registry's key, never a credential.
#[derive(Debug, thiserror::Error)]
pub enum AuthConfigError {
    /// The file cannot be read.
    #[error("{}: cannot read: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What reading failed with.
        #[source]
        error: std::io::Error,
    },
    /// The document is not a Docker config.
    #[error(
        "{origin}: not a Docker config.json ({{\"auths\": {{\"<registry>\": {{\"auth\": \"<base64 user:password>\"}}}}}}): {reason}"
    )]
    Invalid {
        /// The file or Secret it came from.
        origin: String,
        /// What is wrong, without the document's values.
        reason: String,
    },
    /// The registry's entry holds no usable user name and password.
    #[error("{origin}: auths[{key:?}]: {reason}")]
    Entry {
        /// The file or Secret it came from.
        origin: String,
        /// The entry's key.
        key: String,
        /// What is wrong, without the entry's values.
        reason: String,
    },
}

#[derive(Deserialize)]
struct ConfigFile {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
}

#[derive(Deserialize)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
}

/// The registries a Docker config holds credentials for.
#[derive(Debug)]
pub struct DockerConfig {
    origin: String,
    auths: BTreeMap<String, AuthEntry>,
}

impl fmt::Debug for AuthEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuthEntry { .. }")
    }
}

impl DockerConfig {
    /// Parses `bytes`; `origin` names where they came from in errors.
    pub fn parse(origin: &str, bytes: &[u8]) -> Result<DockerConfig, AuthConfigError> {
        // serde_json's messages quote no values of a well-formed document's
        // strings, only positions and types.
        let file: ConfigFile =
            serde_json::from_slice(bytes).map_err(|e| AuthConfigError::Invalid {
                origin: origin.to_string(),
                reason: format!(
                    "line {} column {}: {:?} error",
                    e.line(),
                    e.column(),
                    e.classify()
                ),
            })?;
        Ok(DockerConfig {
            origin: origin.to_string(),
            auths: file.auths,
        })
    }

    /// Reads and parses the file at `path`.
    pub fn read(path: &Path) -> Result<DockerConfig, AuthConfigError> {
        let bytes = std::fs::read(path).map_err(|error| AuthConfigError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        DockerConfig::parse(&path.display().to_string(), &bytes)
    }

    /// No credentials at all: every registry is asked anonymously.
    pub fn empty() -> DockerConfig {
        DockerConfig {
            origin: "(no credentials)".into(),
            auths: BTreeMap::new(),
        }
    }

    /// The keys present, for messages about a registry that is not among them.
    pub fn registries(&self) -> Vec<&str> {
        self.auths.keys().map(String::as_str).collect()
    }

    /// The credentials for `registry` (`host[:port]`): the entry whose key
    /// is that host, with or without a scheme and a path (`https://host/v1/`
    /// as `docker login` writes for some registries).
    pub fn for_registry(&self, registry: &str) -> Result<Option<Credentials>, AuthConfigError> {
        let Some((key, entry)) = self.auths.iter().find(|(key, _)| host_of(key) == registry) else {
            return Ok(None);
        };
        let entry_error = |reason: &str| AuthConfigError::Entry {
            origin: self.origin.clone(),
            key: key.clone(),
            reason: reason.to_string(),
        };
        if let (Some(username), Some(password)) = (&entry.username, &entry.password) {
            return Ok(Some(Credentials {
                username: username.clone(),
                password: password.clone(),
            }));
        }
        let Some(auth) = &entry.auth else {
            return Err(entry_error(
                "has neither auth nor username and password (identity tokens and credential helpers are not supported)",
            ));
        };
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(auth.trim())
            .map_err(|_| entry_error("auth is not base64"))?;
        let decoded = String::from_utf8(decoded)
            .map_err(|_| entry_error("auth is not UTF-8 once decoded"))?;
        let Some((username, password)) = decoded.split_once(':') else {
            return Err(entry_error("auth is not base64 of user:password"));
        };
        Ok(Some(Credentials {
            username: username.to_string(),
            password: password.to_string(),
        }))
    }
}

/// `host[:port]` of a config key: `https://host:5000/v1/` → `host:5000`.
fn host_of(key: &str) -> &str {
    let without_scheme = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    without_scheme.split('/').next().unwrap_or_default()
}

/// The command line's Docker config: `explicit` (`--registry-auth`), else
/// `$REGISTRY_AUTH_FILE`, else `~/.docker/config.json` when it exists, else
/// none. A file named by the flag or the variable must exist.
pub fn command_line_config(explicit: Option<&Path>) -> Result<DockerConfig, AuthConfigError> {
    if let Some(path) = explicit {
        return DockerConfig::read(path);
    }
    if let Some(path) = std::env::var_os("REGISTRY_AUTH_FILE").filter(|p| !p.is_empty()) {
        return DockerConfig::read(Path::new(&path));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match home.map(|home| home.join(".docker/config.json")) {
        Some(path) if path.is_file() => DockerConfig::read(&path),
        _ => Ok(DockerConfig::empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_found_by_host_in_either_spelling() {
        let config = DockerConfig::parse(
            "config.json",
            br#"{"auths": {
                "https://registry.example.com/v1/": {"auth": "dXNlcjpzM2NyZXQ6eA=="},
                "127.0.0.1:5000": {"username": "ci", "password": "pw"}
            }}"#,
        )
        .unwrap();
        let remote = config
            .for_registry("registry.example.com")
            .unwrap()
            .unwrap();
        assert_eq!(
            (remote.username.as_str(), remote.password.as_str()),
            ("user", "s3cret:x")
        );
        let local = config.for_registry("127.0.0.1:5000").unwrap().unwrap();
        assert_eq!(local.username, "ci");
        assert!(config.for_registry("127.0.0.1:5001").unwrap().is_none());
        assert!(!format!("{local:?}").contains("pw"), "{local:?}");
    }

    #[test]
    fn errors_name_the_entry_and_never_its_value() {
        let config = DockerConfig::parse(
            "Secret kube-system/pull",
            br#"{"auths": {"r.example.com": {"auth": "not base64 s3cret!"}}}"#,
        )
        .unwrap();
        let error = config
            .for_registry("r.example.com")
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "Secret kube-system/pull: auths[\"r.example.com\"]: auth is not base64"
        );
        let invalid = DockerConfig::parse("f", br#"{"auths": {"r": "s3cret"}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            invalid.starts_with("f: not a Docker config.json"),
            "{invalid}"
        );
        assert!(!invalid.contains("s3cret"), "{invalid}");
    }
}

//! Where the VCD credentials come from. The upstream Secret mounted as a
//! directory wins (the client re-reads its files when they change); only
//! when that directory is absent are `vcd.user`/`vcd.secret` or
//! `vcd.refreshtoken` from the cloud config used, as upstream lets the
//! mounted files override the file's values.

use std::path::Path;

use super::errors::ConfigError;
use super::model::VcdSection;
use crate::vcd::{CredentialSource, Credentials};

pub(super) fn credential_source(
    vcd: &VcdSection,
    origin: &str,
    secret_dir: &Path,
) -> Result<CredentialSource, ConfigError> {
    // Upstream: `vcd.userorg`, else the cluster's org.
    let user_org = match vcd.user_org.trim() {
        "" => vcd.org.trim(),
        user_org => user_org,
    }
    .to_string();
    let in_file = !vcd.refresh_token.is_empty() || !vcd.user.is_empty() || !vcd.secret.is_empty();
    if secret_dir.is_dir() {
        if in_file {
            tracing::warn!(
                dir = %secret_dir.display(),
                "the cloud config carries credentials too; the mounted Secret's are used"
            );
        }
        return Ok(CredentialSource::Files {
            dir: secret_dir.to_path_buf(),
            user_org,
        });
    }
    if !in_file {
        return Err(ConfigError::NoCredentials {
            origin: origin.to_string(),
            dir: secret_dir.to_path_buf(),
        });
    }
    if !vcd.refresh_token.is_empty() {
        return Ok(CredentialSource::Static(Credentials::ApiToken {
            org: user_org,
            token: vcd.refresh_token.clone(),
        }));
    }
    let missing = |key: &str, other: &str| {
        ConfigError::invalid(
            origin,
            key,
            format!(
                "required with {other} (and no vcd.refreshtoken), because {} does not exist",
                secret_dir.display()
            ),
        )
    };
    if vcd.user.trim().is_empty() {
        return Err(missing("vcd.user", "vcd.secret"));
    }
    if vcd.secret.is_empty() {
        return Err(missing("vcd.secret", "vcd.user"));
    }
    // `org/user` names the user's org, as in the Secret's `username`.
    let (org, user) = match vcd.user.trim().split_once('/') {
        Some((_, user)) if user.contains('/') => {
            return Err(ConfigError::invalid(
                origin,
                "vcd.user",
                "has more than one '/': expected 'user' or 'org/user'",
            ));
        }
        Some((org, user)) => (org.to_string(), user.to_string()),
        None => (user_org, vcd.user.trim().to_string()),
    };
    Ok(CredentialSource::Static(Credentials::Password {
        org,
        user,
        password: vcd.secret.clone(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcd::Secret;

    fn vcd() -> VcdSection {
        VcdSection {
            org: "tenant1".into(),
            ..VcdSection::default()
        }
    }

    #[test]
    fn an_existing_directory_wins_over_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut section = vcd();
        section.refresh_token = Secret::new("tok");
        section.user_org = "other".into();
        let source = credential_source(&section, "f.yaml", dir.path()).unwrap();
        match source {
            CredentialSource::Files {
                dir: used,
                user_org,
            } => {
                assert_eq!(used, dir.path());
                assert_eq!(user_org, "other");
            }
            other => panic!("expected Files, got {other:?}"),
        }
    }

    #[test]
    fn file_credentials_follow_the_secret_rules() {
        let absent = Path::new("/nonexistent/basic-auth");
        let mut section = vcd();
        section.user = "system/admin".into();
        section.secret = Secret::new("pw");
        let source = credential_source(&section, "f.yaml", absent).unwrap();
        let CredentialSource::Static(credentials) = source else {
            panic!("expected Static");
        };
        assert_eq!(
            credentials,
            Credentials::Password {
                org: "system".into(),
                user: "admin".into(),
                password: Secret::new("pw")
            }
        );

        section.user = "a/b/c".into();
        let error = credential_source(&section, "f.yaml", absent).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("vcd.user: has more than one '/'")
        );

        section.secret = Secret::default();
        section.user = "admin".into();
        let error = credential_source(&section, "f.yaml", absent).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cloud config f.yaml: vcd.secret: required with vcd.user (and no vcd.refreshtoken), because /nonexistent/basic-auth does not exist"
        );
    }
}

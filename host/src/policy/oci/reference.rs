//! `oci://registry/repository[:tag][@sha256:<64 hex>]`: where a policy
//! component is published, and the digest that pins it.

use std::fmt;

/// The scheme every reference starts with, so a manifest entry or a suite
/// says plainly that it names a registry and not a file.
pub const SCHEME: &str = "oci://";

/// Why a reference cannot be used; each message says what would work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    /// The text is not of the form the message shows.
    #[error("{text:?} {problem}")]
    Malformed {
        /// The reference as given.
        text: String,
        /// What is wrong and what would work.
        problem: String,
    },
    /// A component served by the CCM must be pinned by its manifest digest.
    #[error(
        "{text:?} has no digest: a policy image is pinned by its manifest's digest, as in {text}@sha256:<64 hex> (`vcd-ccm policy push` prints the full reference)"
    )]
    NotPinned {
        /// The reference as given.
        text: String,
    },
    /// A push target names where to publish, not what was published.
    #[error("{text:?} names a digest: push to a repository, or a repository and a tag")]
    PinnedPushTarget {
        /// The reference as given.
        text: String,
    },
}

/// A parsed reference.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reference {
    /// `host[:port]`.
    pub registry: String,
    /// The repository path, such as `policies/pools`.
    pub repository: String,
    /// The tag, kept for reading; a digest, when present, decides what is pulled.
    pub tag: Option<String>,
    /// The manifest's sha256, 64 lowercase hex digits.
    pub digest: Option<String>,
}

fn malformed(text: &str, problem: impl Into<String>) -> ReferenceError {
    ReferenceError::Malformed {
        text: text.to_string(),
        problem: problem.into(),
    }
}

impl Reference {
    /// Parses any reference: with a tag, a digest, both or neither.
    pub fn parse(text: &str) -> Result<Reference, ReferenceError> {
        let Some(rest) = text.strip_prefix(SCHEME) else {
            return Err(malformed(
                text,
                "is not an image reference: write oci://<registry>/<repository>@sha256:<64 hex>",
            ));
        };
        let (rest, digest) = match rest.split_once('@') {
            Some((name, digest)) => (name, Some(parse_digest(text, digest)?)),
            None => (rest, None),
        };
        let Some((registry, path)) = rest.split_once('/') else {
            return Err(malformed(
                text,
                "has no repository: write oci://<registry>/<repository>, such as oci://registry.example.com/policies/pools",
            ));
        };
        check_registry(text, registry)?;
        // A colon after the last slash starts the tag; one before is the port's.
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag)),
            _ => (path, None),
        };
        check_repository(text, repository)?;
        if let Some(tag) = tag {
            check_tag(text, tag)?;
        }
        Ok(Reference {
            registry: registry.to_string(),
            repository: repository.to_string(),
            tag: tag.map(str::to_string),
            digest,
        })
    }

    /// Parses a reference that must carry a digest: what the CCM, suites and
    /// tools pull.
    pub fn pinned(text: &str) -> Result<Reference, ReferenceError> {
        let reference = Reference::parse(text)?;
        if reference.digest.is_none() {
            return Err(ReferenceError::NotPinned {
                text: text.to_string(),
            });
        }
        Ok(reference)
    }

    /// Parses a push target: a repository and an optional tag, no digest.
    pub fn push_target(text: &str) -> Result<Reference, ReferenceError> {
        let reference = Reference::parse(text)?;
        if reference.digest.is_some() {
            return Err(ReferenceError::PinnedPushTarget {
                text: text.to_string(),
            });
        }
        Ok(reference)
    }

    /// The same repository pinned to `digest` (lowercase hex), without a tag:
    /// the reference `policy push` prints.
    pub fn with_digest(&self, digest: &str) -> Reference {
        Reference {
            registry: self.registry.clone(),
            repository: self.repository.clone(),
            tag: None,
            digest: Some(digest.to_string()),
        }
    }

    /// Whether the registry is on this host: reached over plain HTTP, as
    /// Docker does for such registries; every other over HTTPS.
    pub fn is_loopback(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
            None => self.registry.split(':').next().unwrap_or_default(),
        };
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// `http://registry` or `https://registry`, per [`Reference::is_loopback`].
    pub fn base_url(&self) -> String {
        let scheme = if self.is_loopback() { "http" } else { "https" };
        format!("{scheme}://{}", self.registry)
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@sha256:{digest}")?;
        }
        Ok(())
    }
}

/// The hex of `sha256:<64 lowercase hex>`.
fn parse_digest(text: &str, digest: &str) -> Result<String, ReferenceError> {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return Err(malformed(
            text,
            format!("has digest {digest:?}, which lacks its algorithm: write @sha256:<64 hex>"),
        ));
    };
    if algorithm != "sha256" {
        return Err(malformed(
            text,
            format!("has a {algorithm:?} digest: only sha256 is accepted, as @sha256:<64 hex>"),
        ));
    }
    let lowercase_hex = hex
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if hex.len() != 64 || !lowercase_hex {
        return Err(malformed(
            text,
            format!(
                "has digest sha256:{hex}, which is not 64 lowercase hexadecimal digits ({} characters)",
                hex.len()
            ),
        ));
    }
    Ok(hex.to_string())
}

fn check_registry(text: &str, registry: &str) -> Result<(), ReferenceError> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b".-:[]".contains(&b);
    if registry.is_empty() || !registry.bytes().all(allowed) {
        return Err(malformed(
            text,
            format!(
                "has registry {registry:?}: write a host name or address, with :port if not the default"
            ),
        ));
    }
    Ok(())
}

fn check_repository(text: &str, repository: &str) -> Result<(), ReferenceError> {
    let component_ok = |part: &str| {
        let bytes = part.as_bytes();
        !part.is_empty()
            && bytes
                .iter()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(b))
            && bytes[0].is_ascii_alphanumeric()
            && bytes[bytes.len() - 1].is_ascii_alphanumeric()
    };
    if repository.len() > 255 || !repository.split('/').all(component_ok) {
        return Err(malformed(
            text,
            format!(
                "has repository {repository:?}: write lowercase path components (a-z, 0-9, '.', '_', '-', each starting and ending with a letter or digit) separated by '/'"
            ),
        ));
    }
    Ok(())
}

fn check_tag(text: &str, tag: &str) -> Result<(), ReferenceError> {
    let bytes = tag.as_bytes();
    let ok = !tag.is_empty()
        && tag.len() <= 128
        && (bytes[0].is_ascii_alphanumeric() || bytes[0] == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(b));
    if !ok {
        return Err(malformed(
            text,
            format!(
                "has tag {tag:?}: a tag is 1–128 of A-Z, a-z, 0-9, '_', '.', '-', not starting with '.' or '-'"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_pinned_reference_parses_and_prints_back() {
        let text = format!("oci://127.0.0.1:5000/policies/pools:v1@sha256:{HEX}");
        let reference = Reference::pinned(&text).unwrap();
        assert_eq!(reference.registry, "127.0.0.1:5000");
        assert_eq!(reference.repository, "policies/pools");
        assert_eq!(reference.tag.as_deref(), Some("v1"));
        assert_eq!(reference.digest.as_deref(), Some(HEX));
        assert_eq!(reference.to_string(), text);
        assert_eq!(reference.base_url(), "http://127.0.0.1:5000");
        let remote =
            Reference::pinned(&format!("oci://registry.example.com/p@sha256:{HEX}")).unwrap();
        assert_eq!(remote.base_url(), "https://registry.example.com");
        assert!(
            Reference::parse("oci://[::1]:5000/p")
                .unwrap()
                .is_loopback()
        );
        assert!(
            Reference::parse("oci://localhost:5000/p")
                .unwrap()
                .is_loopback()
        );
    }

    #[test]
    fn bad_references_say_what_would_work() {
        let cases = [
            (
                "registry.example.com/p@sha256:x",
                "write oci://<registry>/<repository>@sha256:<64 hex>",
            ),
            ("oci://registry.example.com/p:v1", "has no digest"),
            ("oci://registry.example.com/p", "has no digest"),
            (
                "oci://registry.example.com/p@sha256:abc",
                "not 64 lowercase hexadecimal digits (3 characters)",
            ),
            (
                "oci://registry.example.com/p@sha512:abc",
                "only sha256 is accepted",
            ),
            ("oci://registry.example.com/p@abc", "lacks its algorithm"),
            ("oci://registry.example.com", "has no repository"),
            ("oci://registry.example.com/Pools@sha256:abc", "not 64"),
            ("oci://reg istry/p", "has registry"),
        ];
        for (text, expected) in cases {
            let error = Reference::pinned(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
        let upper = Reference::pinned(&format!("oci://r/p@sha256:{}", HEX.to_uppercase()))
            .unwrap_err()
            .to_string();
        assert!(upper.contains("lowercase"), "{upper}");
        let repository = Reference::pinned(&format!("oci://r/Pools@sha256:{HEX}"))
            .unwrap_err()
            .to_string();
        assert!(
            repository.contains("has repository \"Pools\""),
            "{repository}"
        );
        let tag = Reference::parse("oci://r/p:-v1").unwrap_err().to_string();
        assert!(tag.contains("has tag \"-v1\""), "{tag}");
    }

    #[test]
    fn push_targets_name_no_digest() {
        let target = Reference::push_target("oci://localhost:5000/policies/pools:v2").unwrap();
        assert_eq!(
            target.with_digest(HEX).to_string(),
            format!("oci://localhost:5000/policies/pools@sha256:{HEX}")
        );
        let pinned = Reference::push_target(&format!("oci://r/p@sha256:{HEX}")).unwrap_err();
        assert!(matches!(pinned, ReferenceError::PinnedPushTarget { .. }));
    }
}

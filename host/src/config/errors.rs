//! `ConfigError`: each is one self-contained line naming the file, the key
//! (and the line when the YAML parser knows it) and what is wrong. Secret
//! values never appear.

use std::path::PathBuf;

use crate::instances::ZonesError;

/// Why the cloud config (or a file it names) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cloud config {}: cannot read: {error}", path.display())]
    Read {
        /// The cloud config's path.
        path: PathBuf,
        /// Why reading failed.
        #[source]
        error: std::io::Error,
    },
    /// A key with an unknown name, a wrong type or a value the rules refuse.
    #[error("cloud config {origin}{}: {}{message}", line_part(*line), key_part(key))]
    Invalid {
        /// The file (or document) the key is in.
        origin: String,
        /// The key's line, when the YAML parser knows it.
        line: Option<usize>,
        /// The key's full path, e.g. `loadbalancer.oneArm.startIP`; `None`
        /// for the document as a whole.
        key: Option<String>,
        /// What is wrong and what would work.
        message: String,
    },
    /// Neither the credential files nor the cloud config give credentials.
    #[error(
        "cloud config {origin}: no VCD credentials: the directory {} does not exist (mount the vcloud-basic-auth Secret there) and the cloud config sets neither vcd.refreshtoken nor vcd.user with vcd.secret",
        dir.display()
    )]
    NoCredentials {
        /// The cloud config's path.
        origin: String,
        /// The credential directory looked for.
        dir: PathBuf,
    },
    /// Zones are enabled but the zones file is missing or invalid.
    #[error(
        "cloud config {origin}: vcd.isZoneEnabledCluster is true, so the zones file is required: {error}"
    )]
    Zones {
        /// The cloud config's path.
        origin: String,
        /// What is wrong with the zones file.
        #[source]
        error: Box<ZonesError>,
    },
}

fn line_part(line: Option<usize>) -> String {
    line.map(|line| format!(", line {line}"))
        .unwrap_or_default()
}

fn key_part(key: &Option<String>) -> String {
    key.as_ref()
        .map(|key| format!("{key}: "))
        .unwrap_or_default()
}

impl ConfigError {
    /// A rule broken by a key's value, found after parsing (no line).
    pub(super) fn invalid(origin: &str, key: &str, message: impl Into<String>) -> Self {
        Self::Invalid {
            origin: origin.to_string(),
            line: None,
            key: Some(key.to_string()),
            message: message.into(),
        }
    }

    /// Translates a parse error into the key's path and a plain message.
    pub(super) fn from_yaml(
        origin: &str,
        error: serde_path_to_error::Error<serde_yaml_ng::Error>,
    ) -> Self {
        let path = error.path().to_string();
        let error = error.into_inner();
        let text = error.to_string();
        // serde_yaml_ng appends the position; libyaml's own syntax errors
        // carry theirs in other words and are kept whole.
        let position = error.location().map(|at| {
            (
                at.line(),
                format!(" at line {} column {}", at.line(), at.column()),
            )
        });
        let (text, line) = match position {
            Some((line, suffix)) if text.ends_with(&suffix) => {
                (text[..text.len() - suffix.len()].to_string(), Some(line))
            }
            _ => (text, None),
        };
        let message = without_path_prefix(&text, &path);
        let (key, message) = reword(&path, message);
        Self::Invalid {
            origin: origin.to_string(),
            line,
            key,
            message,
        }
    }
}

/// serde_yaml_ng prefixes the path it tracks itself (the failing key or
/// one of its parents); the path is shown once, by `ConfigError`.
fn without_path_prefix<'a>(text: &'a str, path: &str) -> &'a str {
    let ancestors = std::iter::once(path).chain(path.rmatch_indices('.').map(|(i, _)| &path[..i]));
    for ancestor in ancestors {
        if let Some(rest) = text
            .strip_prefix(ancestor)
            .and_then(|r| r.strip_prefix(": "))
        {
            return rest;
        }
    }
    text
}

/// The keys whose values must never be echoed.
const SECRET_KEYS: [&str; 2] = ["vcd.secret", "vcd.refreshtoken"];

/// serde's messages in the words of a config file: unknown keys with what
/// is allowed, missing keys by their full path, values never for secrets.
fn reword(path: &str, message: &str) -> (Option<String>, String) {
    // `.` is the document; `?` marks a place a syntax error left unknown.
    let key = (path != "." && !path.contains('?')).then(|| path.to_string());
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let allowed = backticked(rest).skip(1).collect::<Vec<_>>().join(", ");
        return (key, format!("unknown key; allowed: {allowed}"));
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let mut names = backticked(rest);
        let value = names.next().unwrap_or_default();
        let allowed = names.collect::<Vec<_>>().join(", ");
        return (key, format!("{value:?} is not one of {allowed}"));
    }
    // serde names the field of these two at the parent's path.
    let child = |field: &str| match &key {
        Some(parent) => format!("{parent}.{field}"),
        None => field.to_string(),
    };
    let field_of = |prefix: &str| {
        message
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix('`'))
    };
    if let Some(field) = field_of("missing field `") {
        return (Some(child(field)), "required".to_string());
    }
    if let Some(field) = field_of("duplicate field `") {
        return (Some(child(field)), "set more than once".to_string());
    }
    if SECRET_KEYS.contains(&path) {
        return (
            key,
            "expected a string (the value is not shown)".to_string(),
        );
    }
    (key, message.to_string())
}

/// The names between backticks, in order: `` `a`, `b` `` gives a, b. The
/// text starts inside the first name.
fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').step_by(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_are_reworded_for_operators() {
        let (key, message) = reword(
            "loadbalancer.vipSubnett",
            "unknown field `vipSubnett`, expected one of `oneArm`, `network`",
        );
        assert_eq!(key.as_deref(), Some("loadbalancer.vipSubnett"));
        assert_eq!(message, "unknown key; allowed: oneArm, network");

        let (key, message) = reword("loadbalancer.oneArm", "missing field `endIP`");
        assert_eq!(key.as_deref(), Some("loadbalancer.oneArm.endIP"));
        assert_eq!(message, "required");

        let (key, message) = reword("vcd", "duplicate field `org`");
        assert_eq!(key.as_deref(), Some("vcd.org"));
        assert_eq!(message, "set more than once");

        let (_, message) = reword(
            "nodes.hostname",
            "unknown variant `vm`, expected one of `VMName`, `ComputerName`, `None`",
        );
        assert_eq!(message, "\"vm\" is not one of VMName, ComputerName, None");

        let (_, message) = reword(
            "vcd.secret",
            "invalid type: integer `1234`, expected a string",
        );
        assert!(!message.contains("1234"), "{message}");
    }

    #[test]
    fn the_parsers_own_path_prefix_is_dropped() {
        assert_eq!(
            without_path_prefix("loadbalancer: unknown field `x`", "loadbalancer.x"),
            "unknown field `x`"
        );
        assert_eq!(without_path_prefix("a.b: bad", "a.b"), "bad");
        assert_eq!(without_path_prefix("c: bad", "a.b"), "c: bad");
    }

    #[test]
    fn display_is_one_self_contained_line() {
        let error = ConfigError::Invalid {
            origin: "/etc/kubernetes/vcloud/vcloud-ccm-config.yaml".into(),
            line: Some(7),
            key: Some("loadbalancer.oneArm.startIP".into()),
            message: "\"10.0.0\" is not an IPv4 address".into(),
        };
        assert_eq!(
            error.to_string(),
            "cloud config /etc/kubernetes/vcloud/vcloud-ccm-config.yaml, line 7: loadbalancer.oneArm.startIP: \"10.0.0\" is not an IPv4 address"
        );
    }
}

//! What a policy returns, made safe once, where it enters the host: every
//! string escaped and capped, the number of warnings bounded. The byte size
//! of the whole value was already bounded while it was lifted
//! ([`OUTPUT_BYTES`](super::sandbox::OUTPUT_BYTES)); past this point policy
//! text can go into logs, Events and the RDE as it is.

use super::errors::CallError;
use super::model::{AddressChoice, Decision, DecisionError, Persistence, PolicyInfo};
use crate::text::sanitize;

/// The longest string a policy can put in front of a user (a warning, an
/// error message, a name): short enough that an Event carrying it with its
/// context stays within the API server's limit.
pub const TEXT_BYTES: usize = 512;
/// The most warnings one decision may carry; each becomes an Event.
pub const MAX_WARNINGS: usize = 16;

fn text(value: &mut String) {
    *value = sanitize(value, TEXT_BYTES);
}

pub(super) fn decision(mut decision: Decision) -> Result<Decision, CallError> {
    if decision.warnings.len() > MAX_WARNINGS {
        return Err(CallError::TooManyWarnings {
            count: decision.warnings.len(),
            limit: MAX_WARNINGS,
        });
    }
    decision.warnings.iter_mut().for_each(text);
    if let AddressChoice::FromPool(pool) = &mut decision.address {
        text(pool);
    }
    for port in &mut decision.ports {
        if let Some(alias) = &mut port.certificate {
            text(alias);
        }
    }
    if let Some(group) = &mut decision.service_engine_group {
        text(group);
    }
    for entry in &mut decision.traffic {
        if let Persistence::HttpCookie(name) | Persistence::AppCookie(name) = &mut entry.persistence
        {
            text(name);
        }
    }
    Ok(decision)
}

pub(super) fn decision_error(mut error: DecisionError) -> DecisionError {
    match &mut error {
        DecisionError::InvalidAnnotation(field) => {
            text(&mut field.key);
            text(&mut field.message);
        }
        DecisionError::CertificateNotFound(alias) => text(alias),
        DecisionError::UnsupportedPort(port) => text(&mut port.message),
        DecisionError::Other(message) => text(message),
        DecisionError::RequestedAddressUnavailable(_)
        | DecisionError::UnsupportedIpFamily(_)
        | DecisionError::NoAddressAvailable
        | DecisionError::ProfileUnavailable(_) => {}
    }
    error
}

pub(super) fn info(mut info: PolicyInfo) -> PolicyInfo {
    text(&mut info.name);
    text(&mut info.version);
    info
}

pub(super) fn message(mut message: String) -> String {
    text(&mut message);
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_and_errors_are_escaped_and_capped() {
        let decided = decision(Decision::of(
            AddressChoice::FromPool("public\u{1b}[2J".into()),
            Vec::new(),
            vec!["ok\nINFO forged line".into(), "w".repeat(100_000)],
        ))
        .unwrap();
        assert_eq!(decided.warnings[0], "ok\\nINFO forged line");
        assert!(decided.warnings[1].len() <= TEXT_BYTES);
        assert_eq!(
            decided.address,
            AddressChoice::FromPool("public\\u{1b}[2J".into())
        );
        let DecisionError::Other(message) =
            decision_error(DecisionError::Other("x".repeat(1 << 23)))
        else {
            unreachable!()
        };
        assert!(message.len() <= TEXT_BYTES);
    }

    #[test]
    fn too_many_warnings_are_refused_naming_the_bound() {
        let error = decision(Decision::of(
            AddressChoice::KeepCurrent,
            Vec::new(),
            vec![String::new(); MAX_WARNINGS + 1],
        ))
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "returned {} warnings; at most {MAX_WARNINGS} are accepted",
                MAX_WARNINGS + 1
            )
        );
    }
}

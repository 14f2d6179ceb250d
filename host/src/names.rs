//! Kubernetes' and DNS's rules for names: what a hostname, a label key and
//! a label value may be. Each rule is written once here.

/// A DNS name (RFC 1123 subdomain, as Kubernetes checks it): at most 253
/// bytes of dot-separated labels, each 1 to 63 lower-case letters, digits
/// and `-`, neither starting nor ending with `-`.
pub fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// What is wrong with a label name or value part, if anything: 1 to 63 of
/// letters, digits, `-`, `_` and `.`, starting and ending with a letter or
/// digit.
fn label_name_problem(name: &str) -> Option<String> {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let ok = (1..=63).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && edge(name.chars().next())
        && edge(name.chars().last());
    (!ok).then(|| {
        format!(
            "{:?} is not 1 to 63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit",
            crate::text::sanitize(name, 80)
        )
    })
}

/// What is wrong with a label key (`[prefix/]name`), if anything.
pub fn label_key_problem(key: &str) -> Option<String> {
    match key.rsplit_once('/') {
        Some((prefix, _)) if !is_dns_subdomain(prefix) => Some(format!(
            "the prefix of label key {:?} is not a DNS subdomain",
            crate::text::sanitize(key, 80)
        )),
        Some((_, name)) => label_name_problem(name),
        None => label_name_problem(key),
    }
}

/// What is wrong with a label value, if anything (it may be empty).
pub fn label_value_problem(value: &str) -> Option<String> {
    match value.is_empty() {
        true => None,
        false => label_name_problem(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_names_follow_rfc_1123() {
        for good in ["web", "web.example.com", "a-1.b2", &"a".repeat(63)] {
            assert!(is_dns_subdomain(good), "{good}");
        }
        let long_label = "a".repeat(64);
        let long_name = vec!["a".repeat(63); 5].join(".");
        for bad in [
            "",
            "Web.example.com",
            "-a.b",
            "a-.b",
            "a..b",
            "a_b",
            &long_label,
            &long_name,
        ] {
            assert!(!is_dns_subdomain(bad), "{bad}");
        }
    }

    #[test]
    fn label_keys_and_values_follow_kubernetes() {
        for good in ["role", "node-role.kubernetes.io/ingress", "a.b_c-d", "A1"] {
            assert_eq!(label_key_problem(good), None, "{good}");
        }
        for bad in ["", "-a", "a/", "Bad_Prefix/x", "a b", &"a".repeat(64)] {
            assert!(label_key_problem(bad).is_some(), "{bad}");
        }
        assert_eq!(label_value_problem(""), None);
        assert!(label_value_problem("a,b").is_some());
    }
}

//! What each command does; `main` only parses and dispatches.

pub mod check;
#[cfg(feature = "demo")]
pub mod demo;
pub mod plan;
pub mod policy;
pub mod run;

/// An error and its causes on one line. Most of this crate's errors already
/// name their cause in their own message (operators read them without a
/// chain printer), so a cause whose text is already shown is skipped.
fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn causes_already_in_a_message_are_not_repeated() {
        let io = std::io::Error::other("disk on fire");
        let wrapped = anyhow::Error::new(io).context("reading x: disk on fire");
        assert_eq!(one_line(&wrapped), "reading x: disk on fire");
        let plain = anyhow::Error::new(std::io::Error::other("gone")).context("reading y");
        assert_eq!(one_line(&plain), "reading y: gone");
    }
}

//! Text from outside (policy output, annotations, VCD messages) made safe to
//! put into logs, Events and VCD: control characters escaped, length capped.
//!
//! A newline or an escape sequence in such text could forge a log line or
//! repaint a terminal; an unbounded message could be refused by the API server
//! and so hide the very failure it reports.

/// The longest Event message vcd-ccm writes. The API server's limit for an
/// Event's note is 1 KiB (events.k8s.io) and its request bodies 3 MiB; 1 KiB
/// fits both.
pub const EVENT_MESSAGE_BYTES: usize = 1024;

/// `text` with every control character (and every Unicode bidirectional
/// override, which can reorder what a reader sees) written as an escape, cut
/// to at most `max_bytes` bytes on a character boundary. A cut text ends with
/// `…[+N bytes]` saying how much of the escaped text was left out.
pub fn sanitize(text: &str, max_bytes: usize) -> String {
    let mut escaped = String::with_capacity(text.len().min(max_bytes) + 16);
    let mut total = 0usize;
    for c in text.chars() {
        let before = escaped.len();
        push_escaped(&mut escaped, c);
        total += escaped.len() - before;
        // Stop copying once the text is surely over the cap; keep counting.
        if escaped.len() > max_bytes.saturating_add(16) {
            escaped.truncate(before);
        }
    }
    if total <= max_bytes {
        return escaped;
    }
    let marker_room = 24.min(max_bytes);
    let mut end = max_bytes - marker_room;
    while !escaped.is_char_boundary(end) {
        end -= 1;
    }
    escaped.truncate(end);
    let marker = format!("…[+{} bytes]", total - end);
    if escaped.len() + marker.len() <= max_bytes {
        escaped.push_str(&marker);
    }
    escaped
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_control() || is_bidi_control(c) => {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        }
        c => out.push(c),
    }
}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn escapes_line_breaks_and_terminal_sequences() {
        assert_eq!(
            sanitize("ok\nINFO forged line", 100),
            "ok\\nINFO forged line"
        );
        assert_eq!(
            sanitize("\u{1b}[31mred\u{1b}[0m", 100),
            "\\u{1b}[31mred\\u{1b}[0m"
        );
        assert_eq!(sanitize("a\u{202e}b\u{7f}", 100), "a\\u{202e}b\\u{7f}");
        assert_eq!(sanitize("tab\there", 100), "tab\\there");
    }

    #[test]
    fn plain_text_is_unchanged() {
        let text = "policy gold: certificate \"web-cert\" not found — ünïcödé is fine";
        assert_eq!(sanitize(text, 1000), text);
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary_and_says_how_much() {
        let text = "é".repeat(10_000);
        let cut = sanitize(&text, 100);
        assert!(cut.len() <= 100, "{} bytes", cut.len());
        assert!(cut.ends_with("bytes]"), "{cut}");
        assert!(cut.contains("…[+"), "{cut}");
        let escaped = sanitize(&"\n".repeat(1 << 20), 1024);
        assert!(escaped.len() <= 1024);
        assert!(escaped.contains(&format!("[+{} bytes]", 2 * (1 << 20) - (1024 - 24))));
    }

    #[test]
    fn tiny_caps_hold() {
        for max in 0..30 {
            assert!(sanitize(&"x".repeat(100), max).len() <= max);
        }
        assert_eq!(sanitize("abc", 3), "abc");
    }
}

//! Trimming text for prompts: a hand-off carries the previous role's last answer trimmed,
//! and a prompt must stay under the largest a round accepts.

/// The most characters of a hand-off summary.
pub const HANDOFF_LIMIT: usize = 2_000;
/// The most bytes of a diff put in a reviewer's prompt.
pub const DIFF_LIMIT: usize = 60_000;

/// `text` cut to about `limit` characters: its head and its tail (where an agent's summary
/// usually is), with a line saying how much was left out.
pub fn trim_middle(text: &str, limit: usize) -> String {
    let text = text.trim();
    let count = text.chars().count();
    if count <= limit {
        return text.to_owned();
    }
    let head: String = text.chars().take(limit * 3 / 5).collect();
    let tail: String = text.chars().skip(count - limit * 2 / 5).collect();
    format!(
        "{head}\n[... {} characters left out ...]\n{tail}",
        count - head.chars().count() - tail.chars().count()
    )
}

/// `text` cut to at most `limit` bytes at a line end, with a note naming where the rest is.
pub fn trim_bytes(text: &str, limit: usize, rest: &str) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut cut = limit;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = text[..cut].rfind('\n').map_or(cut, |at| at + 1);
    format!(
        "{}[... {} more bytes: {rest} ...]\n",
        &text[..cut],
        text.len() - cut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_and_long_text_keeps_both_ends() {
        assert_eq!(trim_middle("  short  ", 10), "short");
        let long = format!("HEAD{}TAIL", "x".repeat(100));
        let trimmed = trim_middle(&long, 20);
        assert!(
            trimmed.starts_with("HEAD") && trimmed.ends_with("TAIL"),
            "{trimmed}"
        );
        assert!(trimmed.contains("characters left out"));
    }

    #[test]
    fn bytes_are_cut_at_a_line_end() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(trim_bytes(text, 100, "x"), text);
        let cut = trim_bytes(text, 9, "see git diff");
        assert!(
            cut.starts_with("one\ntwo\n[... 6 more bytes: see git diff"),
            "{cut}"
        );
    }
}

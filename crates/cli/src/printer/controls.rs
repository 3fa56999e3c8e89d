//! Keeping terminal controls away from the terminal. Much of what ganger prints came from an
//! agent or a check (answers, `DONE:` lines, errors, check tails, events, file names), and a
//! terminal acts on control characters: `ESC [ 2 J` clears the screen, an OSC sequence sets the
//! window title or a hyperlink, a carriage return hides what came before it on the line. So
//! every text the printer writes has its control characters (C0 but newline and tab, DEL, C1)
//! written as escapes instead.
//!
//! The escape is JSON's, `\u001b`: readable in human text, and valid inside a JSON string with
//! the same meaning, so the one printer can apply it to its JSON too (serde_json escapes C0
//! itself, but writes DEL and C1 as they are). ganger's own text has no control characters; the
//! fleet's live counts line, which needs its own, does not go through here. Bytes that must stay
//! exact when they go to a file or a pipe (`ganger diff`, a patch; `ganger log --raw`, the
//! stream) are escaped only on a terminal, a diff keeping git's colours
//! ([`escape_controls_but_colours`]).

use std::borrow::Cow;
use std::fmt::Write;

/// Whether a terminal would act on `c`: a control character other than newline and tab.
fn is_terminal_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Whether `bytes` (UTF-8) may hold a terminal control: a fast scan for the usual case.
/// Each 64-byte chunk is first tested without branches (which the compiler vectorizes: a
/// 10,000-task status is 1.3 MB, and a byte at a time took 1.3 ms of its 38); only a chunk
/// with a suspect byte (a control, or 0xC2, the lead byte of U+0080..U+00BF) is looked at
/// closely.
fn may_hold_controls(bytes: &[u8]) -> bool {
    const CHUNK: usize = 64;
    let suspect = |b: u8| ((b < 0x20) & (b != b'\n') & (b != b'\t')) | (b == 0x7f) | (b == 0xc2);
    bytes.chunks(CHUNK).enumerate().any(|(n, chunk)| {
        chunk.iter().fold(false, |seen, &b| seen | suspect(b))
            && (n * CHUNK..n * CHUNK + chunk.len()).any(|at| is_control_at(bytes, at))
    })
}

/// Whether a terminal control starts at `at` in `bytes` (UTF-8).
fn is_control_at(bytes: &[u8], at: usize) -> bool {
    let b = bytes[at];
    (b < 0x20 && b != b'\n' && b != b'\t')
        || b == 0x7f
        // C1 controls are U+0080..U+009F: 0xC2 then 0x80..0x9F in UTF-8.
        || (b == 0xc2 && bytes.get(at + 1).is_some_and(|n| (0x80..=0x9f).contains(n)))
}

/// `text` with every terminal control written as `\u00XX`.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !may_hold_controls(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_terminal_control(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every terminal control written as `\u00XX`, except whole colour sequences
/// (`ESC [ digits and semicolons m`, which only colour text), as `git diff --color` writes
/// them.
pub fn escape_controls_but_colours(text: &str) -> Cow<'_, str> {
    if !may_hold_controls(text.as_bytes()) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\u{1b}'
            && let Some(length) = colour_sequence(rest.as_bytes())
        {
            out.push_str(&rest[..length]);
            rest = &rest[length..];
            continue;
        }
        if is_terminal_control(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the colour sequence `bytes` starts with, if it starts with one.
fn colour_sequence(bytes: &[u8]) -> Option<usize> {
    let rest = bytes.strip_prefix(b"\x1b[")?;
    let params = rest
        .iter()
        .take_while(|b| b.is_ascii_digit() || **b == b';')
        .count();
    (rest.get(params) == Some(&b'm')).then_some(2 + params + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_newlines_tabs_and_other_text_kept() {
        let text =
            "DONE: \u{1b}[2J\u{1b}[Hx \u{1b}]0;title\u{7} \u{9b}31m a\rb\u{7f}\u{0}\n\tünï ✓";
        assert_eq!(
            escape_controls(text),
            "DONE: \\u001b[2J\\u001b[Hx \\u001b]0;title\\u0007 \\u009b31m a\\u000db\\u007f\\u0000\n\tünï ✓"
        );
        assert!(matches!(
            escape_controls("plain\n\ttext ünï ✓ \u{a0}"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_control_is_found_at_any_place_of_a_long_text_and_nothing_else_is() {
        let clean: String = "status \u{a9} \u{e9}t\u{e9}\n\t".repeat(40);
        assert!(matches!(escape_controls(&clean), Cow::Borrowed(_)));
        for at in [0, 1, 62, 63, 64, 65, 127, 128, clean.len() - 1] {
            for control in ["\u{1b}", "\r", "\u{7f}", "\u{85}"] {
                let mut text = "x".repeat(clean.len());
                text.replace_range(at..at + 1, control);
                assert!(may_hold_controls(text.as_bytes()), "{control:?} at {at}");
                assert!(
                    !escape_controls(&text).contains(control),
                    "{control:?} at {at}"
                );
            }
        }
        // A C1 control whose two bytes straddle two chunks.
        let mut text = "y".repeat(63);
        text.push('\u{9b}');
        text.push_str("2J");
        assert_eq!(text.as_bytes()[63], 0xc2);
        assert!(escape_controls(&text).ends_with("\\u009b2J"));
    }

    #[test]
    fn a_diff_keeps_its_colours_and_nothing_else() {
        let diff = "\u{1b}[32m+DONE \u{1b}[2J\u{1b}]0;t\u{7}\u{1b}[1;31mred\u{1b}[m\u{1b}[0\n";
        assert_eq!(
            escape_controls_but_colours(diff),
            "\u{1b}[32m+DONE \\u001b[2J\\u001b]0;t\\u0007\u{1b}[1;31mred\u{1b}[m\\u001b[0\n"
        );
    }

    #[test]
    fn escaped_json_is_still_json_with_the_same_value() {
        let value = serde_json::json!({ "done": "DONE: \u{9b}2J \u{7f} \u{1b}[H" });
        let text = serde_json::to_string_pretty(&value).unwrap();
        let escaped = escape_controls(&text);
        assert!(!escaped.chars().any(is_terminal_control), "{escaped}");
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back, value);
    }
}

//! Removing known key values from what ganger writes and prints: the raw stream, stderr, check
//! output, the prompt file, and every text decoded from the stream (answers, `DONE:` lines,
//! errors, events shown by `ganger log`).
//!
//! A key is found as written and in every form a JSON string can give it: any of its ASCII
//! characters escaped (`\u0073k-...`, `\/`), because the stream is JSON that ganger decodes, and
//! a key a parser would decode must not stay in the raw file either. Decoded texts are redacted
//! again ([`Redactor::redact_summary`], [`Redactor::redact_events`]): a parser may join pieces
//! of text from several lines (an answer streamed in pieces), and a key split between two lines
//! is whole only once joined.
//!
//! Every place a key occurs is found first (overlapping occurrences of different keys included)
//! and the union of those places is replaced, so no piece of a key is left beside a
//! replacement. A stream that arrives in pieces goes through
//! [`StreamRedactor`](crate::base::redact_stream::StreamRedactor), which holds back just enough of an
//! unfinished line for a key split between two reads to be found whole.

use ganger_events::{Event, RoundSummary};
use memchr::memmem::Finder;
use std::borrow::Cow;

/// The longest JSON escape of one character (`\u0041`).
const LONGEST_ESCAPE: usize = 6;

/// Replaces each known secret with `[redacted:PROVIDER]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<Secret>,
}

#[derive(Debug, Clone)]
struct Secret {
    finder: Finder<'static>,
    replacement: Vec<u8>,
}

/// A stretch of a text to replace, and the secret whose replacement it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    secret: usize,
}

impl Redactor {
    /// A redactor for `(provider, value)` pairs.
    pub fn new<'a>(secrets: impl IntoIterator<Item = (&'a str, &'a str)>) -> Redactor {
        let mut list: Vec<Secret> = secrets
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(provider, value)| Secret {
                finder: Finder::new(value.as_bytes()).into_owned(),
                replacement: format!("[redacted:{provider}]").into_bytes(),
            })
            .collect();
        // Longer secrets first, so that a place where two start is named after the longer.
        list.sort_by_key(|secret| std::cmp::Reverse(secret.finder.needle().len()));
        Redactor { secrets: list }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The most bytes one occurrence of a secret can take in a text, every character escaped:
    /// how much of an unfinished line a stream must hold back.
    pub(crate) fn longest_match(&self) -> usize {
        self.secrets
            .iter()
            .map(|secret| secret.finder.needle().len() * LONGEST_ESCAPE)
            .max()
            .unwrap_or(0)
    }

    /// The places in `text` to replace, in order, overlapping ones merged.
    pub(crate) fn spans(&self, text: &[u8]) -> Vec<Span> {
        let mut found = Vec::new();
        for (index, secret) in self.secrets.iter().enumerate() {
            let needle = secret.finder.needle().len();
            let mut from = 0;
            // Overlapping occurrences too: the union of all of them is what is replaced.
            while let Some(at) = secret.finder.find(&text[from..]) {
                let start = from + at;
                found.push(Span {
                    start,
                    end: start + needle,
                    secret: index,
                });
                from = start + 1;
            }
        }
        // Escaped forms are only possible where the text has a backslash.
        if memchr::memchr(b'\\', text).is_some() {
            for (index, secret) in self.secrets.iter().enumerate() {
                let key = secret.finder.needle();
                for start in memchr::memchr2_iter(key[0], b'\\', text) {
                    if let Some(end) = escaped_match(text, start, key)
                        && text[start..end] != *key
                    {
                        found.push(Span {
                            start,
                            end,
                            secret: index,
                        });
                    }
                }
            }
        }
        if found.len() > 1 {
            found.sort_by_key(|span| (span.start, span.secret));
            let mut merged: Vec<Span> = Vec::with_capacity(found.len());
            for span in found {
                match merged.last_mut() {
                    Some(last) if span.start < last.end => last.end = last.end.max(span.end),
                    _ => merged.push(span),
                }
            }
            found = merged;
        }
        found
    }

    /// Appends `text` to `out` with `spans` (places in `text`, in order) replaced.
    pub(crate) fn replace_into(&self, text: &[u8], spans: &[Span], out: &mut Vec<u8>) {
        let mut at = 0;
        for span in spans {
            out.extend_from_slice(&text[at..span.start]);
            out.extend_from_slice(&self.secrets[span.secret].replacement);
            at = span.end;
        }
        out.extend_from_slice(&text[at..]);
    }

    /// `text` with every secret replaced.
    pub fn redact<'a>(&self, text: &'a [u8]) -> Cow<'a, [u8]> {
        if self.secrets.is_empty() {
            return Cow::Borrowed(text);
        }
        let spans = self.spans(text);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = Vec::with_capacity(text.len());
        self.replace_into(text, &spans, &mut out);
        Cow::Owned(out)
    }

    /// `text` with every secret replaced.
    pub fn redact_str(&self, text: &str) -> String {
        String::from_utf8_lossy(&self.redact(text.as_bytes())).into_owned()
    }

    /// `text` with every secret replaced, or `None` when it holds none.
    fn redacted(&self, text: &str) -> Option<String> {
        match self.redact(text.as_bytes()) {
            Cow::Borrowed(_) => None,
            Cow::Owned(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        }
    }

    /// Replaces every secret in the texts of a summary decoded from an agent's stream, before
    /// it is stored, written or printed.
    pub fn redact_summary(&self, summary: &mut RoundSummary) {
        if !self.is_empty() {
            summary.rewrite_texts(|text| self.redacted(text));
        }
    }

    /// Replaces every secret in the texts of events decoded from an agent's stream.
    pub fn redact_events(&self, events: &mut [Event]) {
        if !self.is_empty() {
            for event in events {
                event.rewrite_texts(|text| self.redacted(text));
            }
        }
    }
}

/// Where an occurrence of `key` starting at `start` in `text` ends, if there is one: each
/// character of `key` as itself or, for an ASCII one, as a JSON escape of it (`\u0073`, either
/// case of hex digits; `\/`, `\"`, `\\`, `\t`...). A non-ASCII character matches only as itself.
fn escaped_match(text: &[u8], start: usize, key: &[u8]) -> Option<usize> {
    let mut at = start;
    for &wanted in key {
        let byte = *text.get(at)?;
        if byte != b'\\' {
            if byte != wanted {
                return None;
            }
            at += 1;
            continue;
        }
        let (decoded, length) = match *text.get(at + 1)? {
            b'u' => {
                let hex = text.get(at + 2..at + 6)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                let hex = std::str::from_utf8(hex).ok()?;
                (u32::from_str_radix(hex, 16).ok()?, 6)
            }
            b'"' => (u32::from(b'"'), 2),
            b'\\' => (u32::from(b'\\'), 2),
            b'/' => (u32::from(b'/'), 2),
            b'b' => (0x08, 2),
            b'f' => (0x0c, 2),
            b'n' => (u32::from(b'\n'), 2),
            b'r' => (u32::from(b'\r'), 2),
            b't' => (u32::from(b'\t'), 2),
            _ => return None,
        };
        if !wanted.is_ascii() || decoded != u32::from(wanted) {
            return None;
        }
        at += length;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_with_json_escaped_characters_is_found_as_the_parser_would_decode_it() {
        let redactor = Redactor::new([("mock", "sk-a/b\"c-123")]);
        for line in [
            &br#"{"text":"\u0073k-a/b\"c-123"}"#[..],
            br#"{"text":"\u0073\u006B\u002d\u0061\/b\"c-12\u0033"}"#,
            br#"{"text":"sk-a\/b\u0022c-123"}"#,
        ] {
            assert_eq!(
                redactor.redact(line).as_ref(),
                br#"{"text":"[redacted:mock]"}"#,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        // Not the key: another character escaped, a broken escape, a key cut short.
        for line in [
            &br#"{"text":"\u0074k-a/b\"c-123"}"#[..],
            br#"{"text":"\u00k-a/b\"c-123"}"#,
            br#"{"text":"\u0073k-a/b\"c-12"}"#,
        ] {
            assert!(matches!(redactor.redact(line), Cow::Borrowed(_)));
        }
        assert_eq!(redactor.longest_match(), 12 * 6);
    }

    #[test]
    fn decoded_texts_of_summaries_and_events_are_redacted() {
        let redactor = Redactor::new([("mock", "sk-secret-123")]);
        let mut summary = RoundSummary::default();
        summary.apply(&Event::Text {
            text: format!("work\nDONE: {}sk-secret-123", "x".repeat(490)),
        });
        summary.apply(&Event::Error {
            name: "sk-secret-123".into(),
            message: "bad key sk-secret-123".into(),
            status_code: None,
            retryable: None,
        });
        summary.record_line("sk-secret-123");
        redactor.redact_summary(&mut summary);
        let text = serde_json::to_string(&summary).unwrap();
        assert!(!text.contains("sk-secret"), "{text}");
        // The `DONE:` line is clipped after it is redacted, so no piece of the key is left.
        assert_eq!(
            summary.done,
            Some(format!("DONE: {}[redacted:mock]", "x".repeat(490))[..500].to_owned())
        );
        let mut events = vec![Event::Tool {
            name: "bash".into(),
            status: ganger_events::ToolStatus::Error,
            title: Some("echo sk-secret-123".into()),
            error: Some("sk-secret-123".into()),
        }];
        redactor.redact_events(&mut events);
        assert_eq!(
            events,
            [Event::Tool {
                name: "bash".into(),
                status: ganger_events::ToolStatus::Error,
                title: Some("echo [redacted:mock]".into()),
                error: Some("[redacted:mock]".into()),
            }]
        );
    }

    #[test]
    fn every_occurrence_is_replaced_and_clean_lines_are_not_copied() {
        let redactor = Redactor::new([("mock", "sk-secret-123"), ("other", "sk-secret-123456")]);
        let line = b"a sk-secret-123456 b sk-secret-123 c sk-secret-123";
        assert_eq!(
            redactor.redact(line).as_ref(),
            b"a [redacted:other] b [redacted:mock] c [redacted:mock]"
        );
        assert!(matches!(redactor.redact(b"nothing here"), Cow::Borrowed(_)));
        assert!(matches!(Redactor::new([]).redact(b"x"), Cow::Borrowed(_)));
    }

    #[test]
    fn overlapping_keys_leave_no_piece_of_either() {
        let redactor = Redactor::new([("a", "abcdefgh"), ("b", "fghijklm")]);
        assert_eq!(
            redactor.redact(b"<abcdefghijklm> <fghijklm>").as_ref(),
            b"<[redacted:a]> <[redacted:b]>"
        );
        let repeating = Redactor::new([("r", "abababab")]);
        assert_eq!(repeating.redact(b"ababababab!").as_ref(), b"[redacted:r]!");
    }
}

//! Removing known key values from what ganger writes: the raw stream, stderr, check output, the
//! prompt file and the answer. Every place a key occurs is found first (overlapping occurrences
//! of different keys included) and the union of those places is replaced, so no piece of a key
//! is left beside a replacement. A stream that arrives in pieces goes through
//! [`StreamRedactor`](crate::redact_stream::StreamRedactor), which holds back just enough of an
//! unfinished line for a key split between two reads to be found whole.

use memchr::memmem::Finder;
use std::borrow::Cow;

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

    /// The most bytes one occurrence of a secret can take in a text: how much of an unfinished
    /// line a stream must hold back.
    pub(crate) fn longest_match(&self) -> usize {
        self.secrets
            .iter()
            .map(|secret| secret.finder.needle().len())
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
}

#[cfg(test)]
mod tests {
    use super::*;

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

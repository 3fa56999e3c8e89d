//! Removing known key values from what ganger writes: the raw stream, stderr, the prompt file
//! and the answer. Lines are redacted whole (a key never spans a line), so a key split across
//! two reads of a pipe is still found.

use memchr::memmem::Finder;
use std::borrow::Cow;

/// Replaces each known secret with `[redacted:PROVIDER]`.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Vec<(Finder<'static>, Vec<u8>)>,
}

impl Redactor {
    /// A redactor for `(provider, value)` pairs.
    pub fn new<'a>(secrets: impl IntoIterator<Item = (&'a str, &'a str)>) -> Redactor {
        let mut list: Vec<(Finder<'static>, Vec<u8>)> = secrets
            .into_iter()
            .filter(|(_, value)| !value.is_empty())
            .map(|(provider, value)| {
                (
                    Finder::new(value.as_bytes()).into_owned(),
                    format!("[redacted:{provider}]").into_bytes(),
                )
            })
            .collect();
        // Longer secrets first, so that a key containing another is replaced whole.
        list.sort_by_key(|(finder, _)| std::cmp::Reverse(finder.needle().len()));
        Redactor { secrets: list }
    }

    /// `line` with every secret replaced.
    pub fn redact<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        let mut current: Cow<'a, [u8]> = Cow::Borrowed(line);
        for (finder, replacement) in &self.secrets {
            if finder.find(&current).is_none() {
                continue;
            }
            let mut out = Vec::with_capacity(current.len());
            let mut rest: &[u8] = &current;
            while let Some(at) = finder.find(rest) {
                out.extend_from_slice(&rest[..at]);
                out.extend_from_slice(replacement);
                rest = &rest[at + finder.needle().len()..];
            }
            out.extend_from_slice(rest);
            current = Cow::Owned(out);
        }
        current
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
}

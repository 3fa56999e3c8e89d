//! The scanner itself: a recursive descent over one line that checks the JSON grammar as
//! `serde_json` does and records the fields of a [`Field`] table on the way.
//!
//! Objects whose keys can hold a tracked field (the top level, and captured objects with
//! tracked keys of their own) go through [`Scanner::tracked_object`]; every other value goes
//! through the plain [`Reader::value`], which compares no key, so untracked parts of a line
//! cost no more than validation.

use crate::scan::fields::{FieldTable, Kind, Raw, Scan};
use crate::scan::{number, string};

/// How deep objects and arrays may nest before the scanner leaves the line to the full parse
/// (`serde_json` itself gives up at 128).
pub const MAX_DEPTH: usize = 100;

/// Why a scan stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// `serde_json` would reject the line.
    Invalid,
    /// The scanner cannot tell cheaply.
    Unsure,
}

/// A line and what is known of it before the descent. Positions travel by value through the
/// descent (each step returns where it ended), which keeps them in registers.
struct Reader<'a> {
    bytes: &'a [u8],
    /// Whether the line holds control characters (raw tabs and line breaks are whitespace
    /// between tokens, never string content): only then must strings be searched for them.
    controls: bool,
}

/// The descent through the objects where fields are tracked, recording what it finds.
struct Scanner<'a, 't, const N: usize> {
    reader: Reader<'a>,
    table: &'t FieldTable<N>,
    found: [Option<Raw<'a>>; N],
}

/// Judges a line as `serde_json::from_slice::<serde_json::Value>` would, and captures the
/// fields of `table` when it is valid. A line whose top level is not an object is valid with
/// nothing captured.
#[inline]
pub fn scan_fields<'a, const N: usize>(
    bytes: &'a [u8],
    table: &FieldTable<N>,
) -> Scan<[Option<Raw<'a>>; N]> {
    // Once the whole line is known to be UTF-8, strings need only their grammar checked; any
    // non-ASCII byte outside a string is a grammar error anyway.
    let (non_ascii, controls) = string::survey(bytes);
    if non_ascii && std::str::from_utf8(bytes).is_err() {
        return Scan::Invalid;
    }
    let mut scanner = Scanner {
        reader: Reader { bytes, controls },
        table,
        found: [None; N],
    };
    match scanner.document() {
        Ok(()) => Scan::Valid(scanner.found),
        Err(Stop::Invalid) => Scan::Invalid,
        Err(Stop::Unsure) => Scan::Unsure,
    }
}

/// Judges a line as `serde_json::from_slice::<serde_json::Value>` would, capturing nothing.
pub fn validate(bytes: &[u8]) -> Scan<()> {
    match scan_fields(bytes, &FieldTable::new([])) {
        Scan::Valid(_) => Scan::Valid(()),
        Scan::Invalid => Scan::Invalid,
        Scan::Unsure => Scan::Unsure,
    }
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn peek(&self, at: usize) -> Option<u8> {
        self.bytes.get(at).copied()
    }

    /// Where whitespace from `at` ends. Compact JSON has none, so the common case is one
    /// comparison.
    #[inline(always)]
    fn skip_whitespace(&self, mut at: usize) -> usize {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek(at) {
            at += 1;
        }
        at
    }

    /// Steps over `byte` at `at`, with whitespace around it; `Invalid` when it is not there.
    #[inline(always)]
    fn expect(&self, at: usize, byte: u8) -> Result<usize, Stop> {
        let mut at = at;
        if self.peek(at) != Some(byte) {
            at = self.skip_whitespace(at);
            if self.peek(at) != Some(byte) {
                return Err(Stop::Invalid);
            }
        }
        at += 1;
        if self.peek(at).is_some_and(|next| next <= b' ') {
            at = self.skip_whitespace(at);
        }
        Ok(at)
    }

    /// Checks the value at `at` and returns where it ends and its type.
    fn value(&self, at: usize, depth: usize) -> Result<(usize, Kind), Stop> {
        match self.peek(at) {
            Some(b'{') => Ok((self.object(at, depth)?, Kind::Object)),
            Some(b'[') => Ok((self.array(at, depth)?, Kind::Array)),
            Some(b'"') => {
                let (end, escaped) = self.string(at)?;
                Ok((end, Kind::String { escaped }))
            }
            Some(b'-' | b'0'..=b'9') => Ok((number::number(self.bytes, at)?, Kind::Number)),
            Some(b't') => self.literal(at, b"true", Kind::Bool),
            Some(b'f') => self.literal(at, b"false", Kind::Bool),
            Some(b'n') => self.literal(at, b"null", Kind::Null),
            _ => Err(Stop::Invalid),
        }
    }

    fn literal(&self, at: usize, word: &[u8], kind: Kind) -> Result<(usize, Kind), Stop> {
        if self.bytes.get(at..at + word.len()) == Some(word) {
            Ok((at + word.len(), kind))
        } else {
            Err(Stop::Invalid)
        }
    }

    /// Steps over the string whose quote is at `at`; returns where it ends and whether it
    /// holds escapes.
    #[inline(always)]
    fn string(&self, at: usize) -> Result<(usize, bool), Stop> {
        let mut at = at + 1;
        let mut escaped = false;
        loop {
            at = if self.controls {
                string::find_special(self.bytes, at)
            } else {
                string::find_quote_or_backslash(self.bytes, at)
            };
            match self.peek(at) {
                Some(b'"') => return Ok((at + 1, escaped)),
                Some(b'\\') => {
                    escaped = true;
                    at = string::escape(self.bytes, at + 1)?;
                }
                // A control character, or the end of the line inside the string.
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// Steps over the opening bracket or brace at `at`, one level deeper than `depth`.
    #[inline(always)]
    fn enter(&self, at: usize, depth: usize) -> Result<(usize, usize), Stop> {
        if depth >= MAX_DEPTH {
            return Err(Stop::Unsure);
        }
        Ok((self.skip_whitespace(at + 1), depth + 1))
    }

    /// Steps over what follows a member or an element at `at`: a comma (then `Some`, with
    /// where the next one starts) or the closing `close` (then `None`, with where it ends).
    #[inline(always)]
    fn next_member(&self, at: usize, close: u8) -> Result<(usize, bool), Stop> {
        let mut at = at;
        if self.peek(at).is_some_and(|next| next <= b' ') {
            at = self.skip_whitespace(at);
        }
        match self.peek(at) {
            Some(b',') => {
                at += 1;
                if self.peek(at).is_some_and(|next| next <= b' ') {
                    at = self.skip_whitespace(at);
                }
                Ok((at, true))
            }
            Some(byte) if byte == close => Ok((at + 1, false)),
            _ => Err(Stop::Invalid),
        }
    }

    /// Steps over the key at `at` and its colon; returns where the value starts, the key's
    /// content (still escaped) and whether it holds escapes.
    #[inline(always)]
    fn key(&self, at: usize) -> Result<(usize, &'a [u8], bool), Stop> {
        if self.peek(at) != Some(b'"') {
            return Err(Stop::Invalid);
        }
        let (end, escaped) = self.string(at)?;
        let key = self.bytes.get(at + 1..end - 1).unwrap_or_default();
        Ok((self.expect(end, b':')?, key, escaped))
    }

    fn object(&self, at: usize, depth: usize) -> Result<usize, Stop> {
        let (mut at, depth) = self.enter(at, depth)?;
        if self.peek(at) == Some(b'}') {
            return Ok(at + 1);
        }
        loop {
            (at, _, _) = self.key(at)?;
            (at, _) = self.value(at, depth)?;
            let more;
            (at, more) = self.next_member(at, b'}')?;
            if !more {
                return Ok(at);
            }
        }
    }

    fn array(&self, at: usize, depth: usize) -> Result<usize, Stop> {
        let (mut at, depth) = self.enter(at, depth)?;
        if self.peek(at) == Some(b']') {
            return Ok(at + 1);
        }
        loop {
            (at, _) = self.value(at, depth)?;
            let more;
            (at, more) = self.next_member(at, b']')?;
            if !more {
                return Ok(at);
            }
        }
    }
}

impl<'a, const N: usize> Scanner<'a, '_, N> {
    fn document(&mut self) -> Result<(), Stop> {
        let reader = &self.reader;
        let at = reader.skip_whitespace(0);
        let at = if reader.peek(at) == Some(b'{') && self.has_fields_in(None) {
            self.tracked_object(at, 0, None)?
        } else {
            reader.value(at, 0)?.0
        };
        let reader = &self.reader;
        if reader.skip_whitespace(at) == reader.bytes.len() {
            Ok(())
        } else {
            Err(Stop::Invalid)
        }
    }

    fn has_fields_in(&self, parent: Option<usize>) -> bool {
        !self.table.members(parent).indexes().is_empty()
    }

    /// The object at `at`, whose keys may be fields of `parent` (`None`: the top level);
    /// returns where it ends.
    fn tracked_object(
        &mut self,
        at: usize,
        depth: usize,
        parent: Option<usize>,
    ) -> Result<usize, Stop> {
        let (mut at, depth) = self.reader.enter(at, depth)?;
        if self.reader.peek(at) == Some(b'}') {
            return Ok(at + 1);
        }
        loop {
            let (start, key, escaped) = self.reader.key(at)?;
            // An escaped key might decode to a tracked one.
            if escaped {
                return Err(Stop::Unsure);
            }
            at = match self.table.find(parent, key) {
                None => self.reader.value(start, depth)?.0,
                Some(index) => {
                    let (end, kind) = if self.reader.peek(start) == Some(b'{')
                        && self.has_fields_in(Some(index))
                    {
                        (
                            self.tracked_object(start, depth, Some(index))?,
                            Kind::Object,
                        )
                    } else {
                        self.reader.value(start, depth)?
                    };
                    let slot = self.found.get_mut(index).ok_or(Stop::Unsure)?;
                    // A duplicate: serde_json keeps the last one; rather than reason about
                    // which one the captures describe, leave the line to the full parse.
                    if slot.is_some() {
                        return Err(Stop::Unsure);
                    }
                    *slot = Some(Raw {
                        kind,
                        bytes: self.reader.bytes.get(start..end).unwrap_or_default(),
                    });
                    end
                }
            };
            let more;
            (at, more) = self.reader.next_member(at, b'}')?;
            if !more {
                return Ok(at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scan::Field;

    const TABLE: FieldTable<4> = FieldTable::new([
        Field::top("type"),
        Field::top("part"),
        Field::inside(1, "state"),
        Field::inside(2, "status"),
    ]);

    #[test]
    fn fields_are_captured_at_their_place_only() {
        let line = br#"{"type":"tool_use","status":"x","part":{"status":"y","state":{"status":"completed","n":[1,{"status":2}]}}}"#;
        let Scan::Valid(found) = scan_fields(line, &TABLE) else {
            panic!("not valid");
        };
        assert_eq!(found[0].and_then(|raw| raw.plain_str()), Some("tool_use"));
        assert_eq!(found[3].and_then(|raw| raw.plain_str()), Some("completed"));
        assert_eq!(found[2].map(|raw| raw.kind), Some(Kind::Object));
        assert_eq!(
            found[2].map(|raw| raw.bytes),
            Some(&br#"{"status":"completed","n":[1,{"status":2}]}"#[..])
        );
    }

    #[test]
    fn duplicates_and_escapes_where_fields_are_tracked_are_left_to_the_full_parse() {
        let unsure: [&[u8]; 4] = [
            br#"{"type":"a","type":"b"}"#,
            br#"{"part":{"state":{"status":"a","status":"b"}}}"#,
            br#"{"typ\u0065":"a"}"#,
            br#"{"part":{"stat\u0065":{}}}"#,
        ];
        for line in unsure {
            assert_eq!(scan_fields(line, &TABLE), Scan::Unsure);
        }
        // Where no field is tracked, duplicates and escapes do not matter.
        let line = br#"{"type":"a","x":{"y":1,"y":2},"part":{"state":{"n":{"\u0073tatus":1}}}}"#;
        assert!(matches!(scan_fields(line, &TABLE), Scan::Valid(_)));
        assert_eq!(validate(br#"{"type":1,"type":2}"#), Scan::Valid(()));
    }

    #[test]
    fn nesting_beyond_the_limit_is_unsure() {
        let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(validate(deep(MAX_DEPTH).as_bytes()), Scan::Valid(()));
        assert_eq!(validate(deep(MAX_DEPTH + 1).as_bytes()), Scan::Unsure);
    }
}

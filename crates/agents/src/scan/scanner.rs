//! The scanner itself: a recursive descent over one line that checks the JSON grammar as
//! `serde_json` does and records the fields of a [`Field`] table on the way.
//!
//! Objects whose keys can hold a tracked field (the top level, and captured objects with
//! tracked keys of their own) go through [`Scanner::tracked_object`]; every other value goes
//! through the plain [`Scanner::value`], which compares no key, so untracked parts of a line
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

struct Scanner<'a, 't, const N: usize> {
    bytes: &'a [u8],
    /// Whether the line holds control characters (raw tabs and line breaks are whitespace
    /// between tokens, never string content): only then must strings be searched for them.
    controls: bool,
    at: usize,
    depth: usize,
    table: &'t FieldTable<N>,
    found: [Option<Raw<'a>>; N],
}

/// Judges a line as `serde_json::from_slice::<serde_json::Value>` would, and captures the
/// fields of `table` when it is valid. A line whose top level is not an object is valid with
/// nothing captured.
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
        bytes,
        controls,
        at: 0,
        depth: 0,
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

impl<'a, const N: usize> Scanner<'a, '_, N> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    /// Steps over whitespace. Compact JSON has none, so the common case is one comparison.
    #[inline(always)]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// Steps over `byte`, with whitespace around it; `Invalid` when it is not there.
    #[inline(always)]
    fn expect(&mut self, byte: u8) -> Result<(), Stop> {
        if self.peek() != Some(byte) {
            self.skip_whitespace();
            if self.peek() != Some(byte) {
                return Err(Stop::Invalid);
            }
        }
        self.at += 1;
        if self.peek().is_some_and(|next| next <= b' ') {
            self.skip_whitespace();
        }
        Ok(())
    }

    fn document(&mut self) -> Result<(), Stop> {
        self.skip_whitespace();
        if self.peek() == Some(b'{') && self.has_fields_in(None) {
            self.tracked_object(None)?;
        } else {
            self.value()?;
        }
        self.skip_whitespace();
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(Stop::Invalid)
        }
    }

    /// Checks the value at the current position and returns its type. Where it is in the line
    /// is the caller's to work out from where it started, so that values nobody captures cost
    /// nothing more.
    fn value(&mut self) -> Result<Kind, Stop> {
        match self.peek() {
            Some(b'{') => {
                self.object()?;
                Ok(Kind::Object)
            }
            Some(b'[') => {
                self.array()?;
                Ok(Kind::Array)
            }
            Some(b'"') => {
                let escaped = self.string()?;
                Ok(Kind::String { escaped })
            }
            Some(b'-' | b'0'..=b'9') => {
                self.at = number::number(self.bytes, self.at)?;
                Ok(Kind::Number)
            }
            Some(b't') => self.literal(b"true", Kind::Bool),
            Some(b'f') => self.literal(b"false", Kind::Bool),
            Some(b'n') => self.literal(b"null", Kind::Null),
            _ => Err(Stop::Invalid),
        }
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Result<Kind, Stop> {
        if self.bytes.get(self.at..self.at + word.len()) == Some(word) {
            self.at += word.len();
            Ok(kind)
        } else {
            Err(Stop::Invalid)
        }
    }

    /// Steps over the string at the current quote; returns whether it holds escapes.
    #[inline(always)]
    fn string(&mut self) -> Result<bool, Stop> {
        let mut at = self.at + 1;
        let mut escaped = false;
        loop {
            at = if self.controls {
                string::find_special(self.bytes, at)
            } else {
                string::find_quote_or_backslash(self.bytes, at)
            };
            match self.bytes.get(at) {
                Some(b'"') => {
                    self.at = at + 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    at = string::escape(self.bytes, at + 1)?;
                }
                // A control character, or the end of the line inside the string.
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// Steps over an opening bracket or brace, one level deeper.
    fn enter(&mut self) -> Result<(), Stop> {
        self.at += 1;
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Stop::Unsure);
        }
        self.skip_whitespace();
        Ok(())
    }

    /// Steps over what follows a member or an element: a comma (then `true`, more to come) or
    /// the closing `close` (then `false`, one level up).
    #[inline(always)]
    fn next_member(&mut self, close: u8) -> Result<bool, Stop> {
        if self.peek().is_some_and(|next| next <= b' ') {
            self.skip_whitespace();
        }
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                if self.peek().is_some_and(|next| next <= b' ') {
                    self.skip_whitespace();
                }
                Ok(true)
            }
            Some(byte) if byte == close => {
                self.at += 1;
                self.depth -= 1;
                Ok(false)
            }
            _ => Err(Stop::Invalid),
        }
    }

    /// Steps over a key and its colon; returns the key's content (still escaped) and whether
    /// it holds escapes.
    fn key(&mut self) -> Result<(&'a [u8], bool), Stop> {
        if self.peek() != Some(b'"') {
            return Err(Stop::Invalid);
        }
        let start = self.at + 1;
        let escaped = self.string()?;
        let key = self.bytes.get(start..self.at - 1).unwrap_or_default();
        self.expect(b':')?;
        Ok((key, escaped))
    }

    fn object(&mut self) -> Result<(), Stop> {
        self.enter()?;
        if self.peek() == Some(b'}') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.key()?;
            self.value()?;
            if !self.next_member(b'}')? {
                return Ok(());
            }
        }
    }

    fn array(&mut self) -> Result<(), Stop> {
        self.enter()?;
        if self.peek() == Some(b']') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            self.value()?;
            if !self.next_member(b']')? {
                return Ok(());
            }
        }
    }

    fn has_fields_in(&self, parent: Option<usize>) -> bool {
        !self.table.members(parent).indexes().is_empty()
    }

    /// An object whose keys may be fields of `parent` (`None`: the top level).
    fn tracked_object(&mut self, parent: Option<usize>) -> Result<(), Stop> {
        self.enter()?;
        if self.peek() == Some(b'}') {
            self.at += 1;
            self.depth -= 1;
            return Ok(());
        }
        loop {
            let (key, escaped) = self.key()?;
            // An escaped key might decode to a tracked one.
            if escaped {
                return Err(Stop::Unsure);
            }
            match self.table.find(parent, key) {
                None => {
                    self.value()?;
                }
                Some(index) => {
                    let start = self.at;
                    let kind = if self.peek() == Some(b'{') && self.has_fields_in(Some(index)) {
                        self.tracked_object(Some(index))?;
                        Kind::Object
                    } else {
                        self.value()?
                    };
                    // A duplicate: serde_json keeps the last one; rather than reason about
                    // which one the captures describe, leave the line to the full parse.
                    if self.found[index].is_some() {
                        return Err(Stop::Unsure);
                    }
                    self.found[index] = Some(self.raw(kind, start));
                }
            }
            if !self.next_member(b'}')? {
                return Ok(());
            }
        }
    }

    /// The captured form of the value of type `kind` that started at `start` and just ended.
    fn raw(&self, kind: Kind, start: usize) -> Raw<'a> {
        Raw {
            kind,
            bytes: self.bytes.get(start..self.at).unwrap_or_default(),
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

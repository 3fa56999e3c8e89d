//! The scanner itself: a descent over one line that checks the JSON grammar as `serde_json`
//! does and records the fields of a [`FieldTable`] on the way.
//!
//! The top-level object and the tracked objects inside it (captured fields with fields of
//! their own) are walked by one loop, [`Scanner::tracked_objects`]: fields nest only as the
//! table says, so closing an object returns to its field's parent, without recursion. Every
//! other value goes through [`Reader::skip_value`], which compares no key and walks nested
//! objects and arrays in a loop too, keeping one bit per level (object or array): untracked
//! parts of a line cost no more than validation.
//!
//! The cost is per token, so the shapes compact JSON takes have short paths. In a tracked
//! object, a member made of a short plain key, its colon, a string of up to two chunks or an
//! integer, and the comma and quote after it is read from one 64-byte window of the line with
//! one bounds check ([`Scanner::member_in_window`]); its key is matched by a perfect hash. Other
//! shapes hand over what the window read and go on byte by byte: whitespace, escapes, longer
//! values, and the members whose window would run past the end of the line. Elsewhere a key is
//! read with the quote and colon after it from one 16-byte chunk ([`Reader::short_key`]), and a
//! string ends where [`string::find_stop`] says.
//!
//! Positions travel by value (each step returns where it ended), which keeps them in
//! registers. Reading past the end of the line yields a NUL byte, which JSON allows nowhere
//! (not as whitespace, nor as a token, nor raw inside a string), so the end of the line needs
//! no test of its own: whatever expected more fails on it.
//!
//! The generated code is sensitive to small rewordings (a narrower window, a different
//! encoding of "no stop" in a chunk each cost 10% on the benchmark stream when tried):
//! measure with callgrind before and after changing the hot paths.

use crate::scan::fields::{FieldTable, Kind, Members, Raw, Scan, WORD};
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

/// A line, and whether it holds control characters (`CONTROLS`): raw tabs and line breaks are
/// whitespace between tokens, never string content, and only when the line holds any must
/// strings be searched for them. The scanner is built once for each case, so that the string
/// search carries no test for it.
#[derive(Clone, Copy)]
struct Reader<'a, const CONTROLS: bool> {
    bytes: &'a [u8],
}

/// The descent through the objects where fields are tracked, recording what it finds.
struct Scanner<'a, 't, 'f, const N: usize, const CONTROLS: bool> {
    reader: Reader<'a, CONTROLS>,
    table: &'t FieldTable<N>,
    found: &'f mut [Option<Raw<'a>>; N],
}

/// Judges a line as `serde_json::from_slice::<serde_json::Value>` would, and captures the
/// fields of `table` when it is valid. A line whose top level is not an object is valid with
/// nothing captured.
pub fn scan_fields<'a, const N: usize>(
    bytes: &'a [u8],
    table: &FieldTable<N>,
) -> Scan<[Option<Raw<'a>>; N]> {
    let mut found = [None; N];
    match scan_fields_into(bytes, table, &mut found) {
        Scan::Valid(()) => Scan::Valid(found),
        Scan::Invalid => Scan::Invalid,
        Scan::Unsure => Scan::Unsure,
    }
}

/// [`scan_fields`], capturing into `found` (which must hold only `None`): what a caller on a
/// hot path uses, to spare moving the captures around.
#[inline]
pub fn scan_fields_into<'a, const N: usize>(
    bytes: &'a [u8],
    table: &FieldTable<N>,
    found: &mut [Option<Raw<'a>>; N],
) -> Scan<()> {
    // Once the whole line is known to be UTF-8, strings need only their grammar checked; any
    // non-ASCII byte outside a string is a grammar error anyway.
    let (non_ascii, controls) = string::survey(bytes);
    if non_ascii && std::str::from_utf8(bytes).is_err() {
        return Scan::Invalid;
    }
    let judged = if controls {
        Scanner::<N, true> {
            reader: Reader { bytes },
            table,
            found,
        }
        .document()
    } else {
        Scanner::<N, false> {
            reader: Reader { bytes },
            table,
            found,
        }
        .document()
    };
    match judged {
        Ok(()) => Scan::Valid(()),
        Err(Stop::Invalid) => Scan::Invalid,
        Err(Stop::Unsure) => Scan::Unsure,
    }
}

/// Judges a line as `serde_json::from_slice::<serde_json::Value>` would, capturing nothing.
pub fn validate(bytes: &[u8]) -> Scan<()> {
    const NOTHING: FieldTable<0> = FieldTable::new([]);
    scan_fields_into(bytes, &NOTHING, &mut [])
}

/// The bit a level takes in [`Reader::skip_value`]'s stack; enough for [`MAX_DEPTH`] levels.
type Levels = u128;
const _: () = assert!(MAX_DEPTH <= Levels::BITS as usize);

/// How many bytes [`Scanner::member_in_window`] reads at once: a key of up to [`WORD`] - 3
/// bytes with its quotes and colon, a string value of up to two chunks with its quotes, and
/// the comma and quote after it.
const MEMBER: usize = 4 * WORD;

/// How far [`Scanner::member_in_window`] read a member.
enum Member {
    /// Whole, and a comma after it: the next key's quote is here.
    Next(usize),
    /// Whole, and the object's closing brace after it: the object ends here.
    Last(usize),
    /// Whole, followed by something else (whitespace, or an error): the value ends here.
    Ended(usize),
    /// Its key: the value starts at `start` (no whitespace before it), and is `field` if that
    /// is tracked.
    Value { field: Option<usize>, start: usize },
    /// Nothing: the member has another shape.
    Other,
}

impl Member {
    /// [`Member::Value`] for the value at `start` in the window at `at`, after the whitespace
    /// there.
    #[inline(always)]
    fn value<const CONTROLS: bool>(
        field: Option<usize>,
        at: usize,
        start: usize,
        reader: Reader<'_, CONTROLS>,
    ) -> Member {
        Member::Value {
            field,
            start: reader.skip_whitespace(at + start),
        }
    }
}

/// A key read by [`Reader::short_key`]: its length, the chunk that starts with it, and where
/// its value starts.
struct ShortKey<'a> {
    length: usize,
    chunk: &'a [u8; WORD],
    value: usize,
}

impl<'a, const CONTROLS: bool> Reader<'a, CONTROLS> {
    /// The byte at `at`, or NUL past the end.
    #[inline(always)]
    fn byte(self, at: usize) -> u8 {
        match self.bytes.get(at) {
            Some(&byte) => byte,
            None => 0,
        }
    }

    /// Where whitespace from `at` ends. Compact JSON has none, so the common case is one
    /// comparison.
    #[inline(always)]
    fn skip_whitespace(self, at: usize) -> usize {
        if self.byte(at) > b' ' {
            return at;
        }
        self.skip_whitespace_from(at)
    }

    fn skip_whitespace_from(self, mut at: usize) -> usize {
        while let b' ' | b'\n' | b'\t' | b'\r' = self.byte(at) {
            at += 1;
        }
        at
    }

    /// Steps over the colon after a key ending at `at`, and the whitespace around it; returns
    /// where the value starts.
    #[inline(always)]
    fn colon(self, at: usize) -> Result<usize, Stop> {
        let at = self.skip_whitespace(at);
        if self.byte(at) != b':' {
            return Err(Stop::Invalid);
        }
        Ok(self.skip_whitespace(at + 1))
    }

    /// Steps over the string whose quote is at `at`; returns where it ends and whether it
    /// holds escapes.
    #[inline(always)]
    fn string(self, at: usize) -> Result<(usize, bool), Stop> {
        let mut at = at + 1;
        let mut escaped = false;
        loop {
            at = string::find_stop(self.bytes, at, CONTROLS);
            match self.byte(at) {
                b'"' => return Ok((at + 1, escaped)),
                b'\\' => {
                    escaped = true;
                    at = string::escape(self.bytes, at + 1)?;
                }
                // A control character, or the end of the line inside the string.
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// The key whose quote is at `at`, when it is short, plain, and followed right away by its
    /// colon: read from one chunk, which is how compact JSON writes nearly every key.
    #[inline(always)]
    fn short_key(self, at: usize) -> Option<ShortKey<'a>> {
        let chunk: &[u8; WORD] = self.bytes.get(at + 1..at + 1 + WORD)?.first_chunk()?;
        let length = string::first_stop(chunk, CONTROLS);
        if length + 1 < WORD && chunk[length] == b'"' && chunk[length + 1] == b':' {
            Some(ShortKey {
                length,
                chunk,
                value: self.skip_whitespace(at + length + 3),
            })
        } else {
            None
        }
    }

    /// The window of a member whose key's quote is at `at`, when the line is long enough.
    #[inline(always)]
    fn window(self, at: usize) -> Option<&'a [u8; MEMBER]> {
        self.bytes.get(at..at + MEMBER)?.first_chunk()
    }

    /// Steps over the key whose quote is at `at` and the colon after it; returns where the
    /// value starts.
    #[inline(always)]
    fn key(self, at: usize) -> Result<usize, Stop> {
        if self.byte(at) != b'"' {
            return Err(Stop::Invalid);
        }
        if let Some(key) = self.short_key(at) {
            return Ok(key.value);
        }
        self.colon(self.string(at)?.0)
    }

    /// Steps over the number or literal at `at`; returns where it ends.
    #[inline(always)]
    fn scalar(self, at: usize) -> Result<usize, Stop> {
        let word: &[u8] = match self.byte(at) {
            b'-' | b'0'..=b'9' => return number::number(self.bytes, at),
            b't' => b"true",
            b'f' => b"false",
            b'n' => b"null",
            _ => return Err(Stop::Invalid),
        };
        if self.bytes.get(at..at + word.len()) == Some(word) {
            Ok(at + word.len())
        } else {
            Err(Stop::Invalid)
        }
    }

    /// Steps over the value at `at` (any whitespace before it already skipped), enclosed in
    /// `depth` objects and arrays; returns where it ends.
    ///
    /// Nested objects and arrays are walked in a loop: `levels` holds one bit per open level,
    /// set for an object, the innermost in bit 0.
    fn skip_value(self, mut at: usize, depth: usize) -> Result<usize, Stop> {
        let mut levels: Levels = 0;
        let mut open = 0;
        loop {
            // A value starts at `at`.
            match self.byte(at) {
                b'"' => at = self.string(at)?.0,
                bracket @ (b'{' | b'[') => {
                    if depth + open >= MAX_DEPTH {
                        return Err(Stop::Unsure);
                    }
                    let object = bracket == b'{';
                    open += 1;
                    levels = levels << 1 | Levels::from(object);
                    at = self.skip_whitespace(at + 1);
                    // `]` and `}` are two after `[` and `{`.
                    if self.byte(at) != bracket + 2 {
                        if object {
                            at = self.key(at)?;
                        }
                        continue;
                    }
                    // Empty: closed below.
                    at += 1;
                    open -= 1;
                    levels >>= 1;
                }
                _ => at = self.scalar(at)?,
            }
            // A value ended at `at`: close levels until one goes on.
            loop {
                if open == 0 {
                    return Ok(at);
                }
                at = self.skip_whitespace(at);
                let object = levels & 1 == 1;
                match self.byte(at) {
                    b',' => {
                        at = self.skip_whitespace(at + 1);
                        if object {
                            at = self.key(at)?;
                        }
                        break;
                    }
                    b'}' if object => {}
                    b']' if !object => {}
                    _ => return Err(Stop::Invalid),
                }
                at += 1;
                open -= 1;
                levels >>= 1;
            }
        }
    }

    /// Steps over the value at `at`, enclosed in `depth` objects and arrays, where it is most
    /// likely a string or a number; returns where it ends.
    #[inline(always)]
    fn member_value(self, at: usize, depth: usize) -> Result<usize, Stop> {
        match self.byte(at) {
            b'"' => Ok(self.string(at)?.0),
            b'0'..=b'9' => number::number(self.bytes, at),
            _ => self.skip_value(at, depth),
        }
    }

    /// Steps over the value at `at`, enclosed in `depth` objects and arrays; returns where it
    /// ends and its type.
    #[inline(always)]
    fn typed_value(self, at: usize, depth: usize) -> Result<(usize, Kind), Stop> {
        let kind = match self.byte(at) {
            b'"' => {
                let (end, escaped) = self.string(at)?;
                return Ok((end, Kind::String { escaped }));
            }
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            b't' | b'f' => Kind::Bool,
            b'n' => Kind::Null,
            _ => return Ok((self.scalar(at)?, Kind::Number)),
        };
        Ok((self.skip_value(at, depth)?, kind))
    }
}

impl<'a, const N: usize, const CONTROLS: bool> Scanner<'a, '_, '_, N, CONTROLS> {
    fn document(&mut self) -> Result<(), Stop> {
        let reader = self.reader;
        let at = reader.skip_whitespace(0);
        let at = if reader.byte(at) == b'{' && !self.table.members(None).is_empty() {
            self.tracked_objects(at)?
        } else {
            reader.skip_value(at, 0)?
        };
        if reader.skip_whitespace(at) == reader.bytes.len() {
            Ok(())
        } else {
            Err(Stop::Invalid)
        }
    }

    /// The top-level object at `at` and the tracked objects inside it; returns where it ends.
    ///
    /// One loop walks them all: the object being read is the value of field `current` (`None`
    /// for the top level), whose parent in the table is the object around it, since fields
    /// nest only as the table says. An object is recorded as its field's value when it opens
    /// (which catches a duplicate) and again, whole, when it closes.
    fn tracked_objects(&mut self, at: usize) -> Result<usize, Stop> {
        let reader = self.reader;
        let table = self.table;
        let mut current: Option<usize> = None;
        let mut members: &Members<N> = table.members(None);
        // Where the object of each open field starts.
        let mut starts = [0; N];
        // How many objects and arrays enclose the values of the current object.
        let mut depth = 1;
        let mut at = reader.skip_whitespace(at + 1);
        let mut closing = match reader.byte(at) {
            b'"' => false,
            b'}' => {
                at += 1;
                true
            }
            _ => return Err(Stop::Invalid),
        };
        'member: loop {
            if !closing {
                // A key's quote is at `at`. The common member is read from one window.
                let window = reader
                    .window(at)
                    .map(|window| self.member_in_window(window, members, at));
                let (field, start) = match window {
                    Some(Ok(Member::Next(next))) => {
                        at = next;
                        continue;
                    }
                    Some(Ok(Member::Last(end))) => (None, end),
                    Some(Ok(Member::Ended(end))) => (None, end),
                    Some(Ok(Member::Value { field, start })) => (field, start),
                    Some(Err(stop)) => return Err(stop),
                    Some(Ok(Member::Other)) | None => self.key(at, members)?,
                };
                match window {
                    Some(Ok(Member::Last(end))) => {
                        at = end;
                        closing = true;
                    }
                    Some(Ok(Member::Ended(end))) => at = end,
                    _ => match field {
                        // A tracked object: read its members next.
                        Some(index)
                            if reader.byte(start) == b'{'
                                && !table.members(Some(index)).is_empty() =>
                        {
                            if depth >= MAX_DEPTH {
                                return Err(Stop::Unsure);
                            }
                            self.record(index, Kind::Object, start, start)?;
                            if let Some(slot) = starts.get_mut(index) {
                                *slot = start;
                            }
                            current = Some(index);
                            members = table.members(current);
                            depth += 1;
                            at = reader.skip_whitespace(start + 1);
                            match reader.byte(at) {
                                b'"' => continue,
                                b'}' => {
                                    at += 1;
                                    closing = true;
                                }
                                _ => return Err(Stop::Invalid),
                            }
                        }
                        Some(index) => at = self.capture(start, depth, index)?,
                        None => at = reader.member_value(start, depth)?,
                    },
                }
            }
            // A value ended at `at`, or (`closing`) the current object did: close objects until
            // one goes on with another member.
            loop {
                if !closing {
                    // Compact JSON: a comma and the next key's quote, in one comparison.
                    if reader.bytes.get(at..at + 2) == Some(b",\"") {
                        at += 1;
                        continue 'member;
                    }
                    at = reader.skip_whitespace(at);
                    match reader.byte(at) {
                        b',' => {
                            at = reader.skip_whitespace(at + 1);
                            if reader.byte(at) != b'"' {
                                return Err(Stop::Invalid);
                            }
                            continue 'member;
                        }
                        b'}' => at += 1,
                        _ => return Err(Stop::Invalid),
                    }
                }
                closing = false;
                let Some(index) = current else {
                    return Ok(at);
                };
                let start = starts.get(index).copied().unwrap_or_default();
                if let Some(slot) = self.found.get_mut(index) {
                    *slot = Some(Raw {
                        kind: Kind::Object,
                        bytes: reader.bytes.get(start..at).unwrap_or_default(),
                    });
                }
                current = table.fields().get(index).and_then(|field| field.parent);
                members = table.members(current);
                depth -= 1;
            }
        }
    }

    /// The key of the member whose quote is at `at`, read in full: the field among `members`
    /// it names, if any, and where its value starts.
    fn key(&self, at: usize, members: &Members<N>) -> Result<(Option<usize>, usize), Stop> {
        let reader = self.reader;
        match reader.short_key(at) {
            Some(key) => Ok((members.find_short(key.chunk, key.length), key.value)),
            None => {
                let (end, escaped) = reader.string(at)?;
                // An escaped key might decode to a tracked one.
                if escaped {
                    return Err(Stop::Unsure);
                }
                let key = reader.bytes.get(at + 1..end - 1).unwrap_or_default();
                Ok((self.table.find(members, key), reader.colon(end)?))
            }
        }
    }

    /// The member of a tracked object whose key's quote starts `window` (at `at` in the line),
    /// as far as it has the most common shape: a short plain key and its colon, then a string
    /// or integer that ends in the window, then a comma and the next key's quote or the
    /// object's closing brace. Records the value when it is a field among `members` and was
    /// read whole.
    #[inline(always)]
    fn member_in_window(
        &mut self,
        window: &'a [u8; MEMBER],
        members: &Members<N>,
        at: usize,
    ) -> Result<Member, Stop> {
        let (_, rest) = window.split_at(1);
        let Some(key) = rest.first_chunk::<WORD>() else {
            return Ok(Member::Other);
        };
        let length = string::first_stop(key, CONTROLS);
        if length + 2 >= WORD || key[length] != b'"' || key[length + 1] != b':' {
            return Ok(Member::Other);
        }
        let field = members.find_short(key, length);
        // Where the value starts in the window: at most WORD + 1.
        let start = length + 3;
        let (_, value) = window.split_at(start);
        let (end, kind) = match value.first() {
            Some(b'"') => {
                let (_, content) = value.split_at(1);
                let (Some(first), Some(second)) =
                    (content.first_chunk::<WORD>(), content.get(WORD..2 * WORD))
                else {
                    return Ok(Member::Other);
                };
                // With no stop in either chunk, `stop` is the byte after them: it ends the
                // string if it is a quote, and otherwise the general path reads on.
                let stop = match string::first_stop(first, CONTROLS) {
                    WORD => {
                        WORD + second
                            .first_chunk()
                            .map_or(WORD, |second| string::first_stop(second, CONTROLS))
                    }
                    stop => stop,
                };
                if content.get(stop) != Some(&b'"') {
                    return Ok(Member::value(field, at, start, self.reader));
                }
                (start + stop + 2, Kind::String { escaped: false })
            }
            Some(b'1'..=b'9') => match value.first_chunk().and_then(number::integer) {
                Some(digits) => (start + digits, Kind::Number),
                None => return Ok(Member::value(field, at, start, self.reader)),
            },
            _ => return Ok(Member::value(field, at, start, self.reader)),
        };
        if let Some(index) = field {
            self.record(index, kind, at + start, at + end)?;
        }
        // What follows: the next key's quote or the end of the object.
        Ok(match (window.get(end), window.get(end + 1)) {
            (Some(b','), Some(b'"')) => Member::Next(at + end + 1),
            (Some(b'}'), _) => Member::Last(at + end + 1),
            _ => Member::Ended(at + end),
        })
    }

    /// Records the value of field `index` at `start` (not a tracked object), enclosed in
    /// `depth` objects; returns where it ends.
    #[inline(always)]
    fn capture(&mut self, start: usize, depth: usize, index: usize) -> Result<usize, Stop> {
        let (end, kind) = self.reader.typed_value(start, depth)?;
        self.record(index, kind, start, end)?;
        Ok(end)
    }

    /// Records `line[start..end]` as the value of field `index`, of type `kind`.
    #[inline(always)]
    fn record(&mut self, index: usize, kind: Kind, start: usize, end: usize) -> Result<(), Stop> {
        let slot = self.found.get_mut(index).ok_or(Stop::Unsure)?;
        // A duplicate: serde_json keeps the last one; rather than reason about which one the
        // captures describe, leave the line to the full parse.
        if slot.is_some() {
            return Err(Stop::Unsure);
        }
        *slot = Some(Raw {
            kind,
            bytes: self.reader.bytes.get(start..end).unwrap_or_default(),
        });
        Ok(())
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

//! What a caller asks the scanner for (the fields to capture) and what it gets back.

/// A field to capture: a key, in the line's top-level object or inside another captured field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The key, exactly as it must appear unescaped in the line.
    pub key: &'static str,
    /// The index of the enclosing field in the table, or `None` for the top-level object.
    pub parent: Option<usize>,
}

impl Field {
    /// A key of the line's top-level object.
    pub const fn top(key: &'static str) -> Field {
        Field { key, parent: None }
    }

    /// A key of the object held by field `parent` of the same table.
    pub const fn inside(parent: usize, key: &'static str) -> Field {
        Field {
            key,
            parent: Some(parent),
        }
    }
}

/// The indexes of the fields of one object, in a fixed-size list, with the lengths of their
/// keys as a bit set so that most other keys are passed over with one test.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Members<const N: usize> {
    indexes: [usize; N],
    count: usize,
    lengths: u64,
}

/// The bit of a key length in [`Members::lengths`] (all lengths from 63 up share one).
const fn length_bit(length: usize) -> u64 {
    1 << if length < 63 { length } else { 63 }
}

impl<const N: usize> Members<N> {
    const EMPTY: Members<N> = Members {
        indexes: [0; N],
        count: 0,
        lengths: 0,
    };

    const fn push(&mut self, index: usize, key: &str) {
        self.indexes[self.count] = index;
        self.count += 1;
        self.lengths |= length_bit(key.len());
    }

    /// The indexes.
    pub(crate) fn indexes(&self) -> &[usize] {
        self.indexes.split_at(self.count).0
    }
}

/// The fields a caller wants captured, each object's fields listed apart so that the scanner
/// compares a key only with the few fields that can sit where it is.
///
/// A field's `parent` must come before it in the table (checked when the table is built, at
/// compile time for a `const`). Every field on the way to a captured one must itself be in the
/// table, so that the scanner sees duplicates at every level that matters.
#[derive(Debug, Clone, Copy)]
pub struct FieldTable<const N: usize> {
    fields: [Field; N],
    top: Members<N>,
    inside: [Members<N>; N],
}

impl<const N: usize> FieldTable<N> {
    /// A table of `fields`.
    ///
    /// # Panics
    ///
    /// When a field's parent does not come before it (in a `const`, the build fails).
    pub const fn new(fields: [Field; N]) -> FieldTable<N> {
        let mut top = Members::EMPTY;
        let mut inside = [Members::EMPTY; N];
        let mut index = 0;
        while index < N {
            match fields[index].parent {
                None => top.push(index, fields[index].key),
                Some(parent) => {
                    assert!(parent < index, "a field's parent must come before it");
                    inside[parent].push(index, fields[index].key);
                }
            }
            index += 1;
        }
        FieldTable {
            fields,
            top,
            inside,
        }
    }

    /// The fields, as given.
    pub const fn fields(&self) -> &[Field; N] {
        &self.fields
    }

    /// The fields of the top-level object (`None`) or of field `parent`.
    pub(crate) fn members(&self, parent: Option<usize>) -> &Members<N> {
        match parent {
            None => &self.top,
            Some(parent) => &self.inside[parent],
        }
    }

    /// The index of the field `key` of the top-level object (`None`) or of field `parent`.
    #[inline]
    pub(crate) fn find(&self, parent: Option<usize>, key: &[u8]) -> Option<usize> {
        let members = self.members(parent);
        if members.lengths & length_bit(key.len()) == 0 {
            return None;
        }
        for &index in members.indexes() {
            let name = self.fields.get(index)?.key.as_bytes();
            // Keys are short: a byte loop beats calling memcmp.
            if name.len() == key.len() && name.iter().zip(key).all(|(a, b)| a == b) {
                return Some(index);
            }
        }
        None
    }
}

/// The JSON type of a captured value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An object.
    Object,
    /// An array.
    Array,
    /// A string.
    String {
        /// Whether it holds backslash escapes (it must then be decoded to be read).
        escaped: bool,
    },
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
}

/// A captured value: its type and its bytes exactly as written in the line (a string with its
/// quotes, an object with its braces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw<'a> {
    /// The value's JSON type.
    pub kind: Kind,
    /// The value as written.
    pub bytes: &'a [u8],
}

impl<'a> Raw<'a> {
    /// The text of a string without escapes (borrowed from the line), or `None` for an escaped
    /// string or any other value.
    pub fn plain_str(&self) -> Option<&'a str> {
        match self.kind {
            Kind::String { escaped: false } => {
                let content = self.bytes.get(1..self.bytes.len().saturating_sub(1))?;
                std::str::from_utf8(content).ok()
            }
            _ => None,
        }
    }

    /// Whether this is a string without escapes equal to `text`.
    pub fn is_plain(&self, text: &str) -> bool {
        self.kind == (Kind::String { escaped: false })
            && self.bytes.len() == text.len() + 2
            && self.bytes.get(1..=text.len()) == Some(text.as_bytes())
    }

    /// The text of a string, escapes decoded exactly as `serde_json` decodes them; `None` for
    /// any other value.
    pub fn string(&self) -> Option<String> {
        match self.kind {
            Kind::String { escaped: false } => self.plain_str().map(str::to_owned),
            Kind::String { escaped: true } => serde_json::from_slice(self.bytes).ok(),
            _ => None,
        }
    }

    /// A number written as plain decimal digits (no sign, point or exponent) that fits a
    /// `u64`; `None` for any other value, including numbers written otherwise.
    pub fn plain_u64(&self) -> Option<u64> {
        if self.kind != Kind::Number || !self.bytes.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(self.bytes).ok()?.parse().ok()
    }

    /// A number as `serde_json` reads it into an `f64`; `None` for any other value.
    pub fn f64(&self) -> Option<f64> {
        match self.kind {
            Kind::Number => serde_json::from_slice(self.bytes).ok(),
            _ => None,
        }
    }
}

/// The scanner's judgement of a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scan<T> {
    /// `serde_json` accepts the line, and here is what was captured.
    Valid(T),
    /// `serde_json` rejects the line.
    Invalid,
    /// The scanner could not prove either; the caller must run the full parse.
    Unsure,
}

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

/// How many bytes of a key [`Members`] holds as one number: keys that fit are matched with
/// one lookup and one comparison, longer ones byte by byte.
pub(crate) const WORD: usize = 16;

/// How many bits [`Members::slots`] is indexed by.
const SLOT_BITS: u32 = 6;

/// The fields of one object, in a fixed-size list, and a perfect hash of their keys: each
/// key's slot holds its place in the list, so that a key is matched with one lookup and one
/// comparison.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Members<const N: usize> {
    indexes: [usize; N],
    lengths: [usize; N],
    /// Each key's first [`WORD`] bytes, little-endian, zero beyond the key ([`key_word`]).
    words: [u128; N],
    count: usize,
    /// Place in the list plus one of the key hashing to each slot; zero for none.
    slots: [u8; 1 << SLOT_BITS],
    /// The multiplier of [`slot`] that sends no two of these keys to the same slot.
    multiplier: u64,
}

/// The first [`WORD`] bytes of `key`, little-endian, zero beyond the key.
const fn key_word(key: &[u8]) -> u128 {
    let mut word = 0u128;
    let mut at = 0;
    while at < key.len() && at < WORD {
        word |= (key[at] as u128) << (8 * at);
        at += 1;
    }
    word
}

/// The masks that keep the first `length` bytes of a [`key_word`], by `length`.
const KEY_MASKS: [u128; WORD] = {
    let mut masks = [0; WORD];
    let mut length = 1;
    while length < WORD {
        masks[length] = u128::MAX >> (128 - 8 * length);
        length += 1;
    }
    masks
};

/// The slot of the key of `length` bytes whose [`key_word`] is `word`.
#[inline(always)]
const fn slot(word: u128, length: usize, multiplier: u64) -> usize {
    let folded = (word as u64) ^ ((word >> 64) as u64) ^ length as u64;
    (folded.wrapping_mul(multiplier) >> (64 - SLOT_BITS)) as usize
}

impl<const N: usize> Members<N> {
    const EMPTY: Members<N> = Members {
        indexes: [0; N],
        lengths: [0; N],
        words: [0; N],
        count: 0,
        slots: [0; 1 << SLOT_BITS],
        multiplier: 0,
    };

    const fn push(&mut self, index: usize, key: &str) {
        self.indexes[self.count] = index;
        self.lengths[self.count] = key.len();
        self.words[self.count] = key_word(key.as_bytes());
        self.count += 1;
    }

    /// Chooses a multiplier under which the keys take distinct slots, and fills the slots.
    /// Keys that share their first [`WORD`] bytes and their length would always collide; the
    /// build fails for them.
    const fn hash(&mut self) {
        let mut candidate: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut tries = 0;
        loop {
            assert!(tries < 10_000, "no perfect hash for these keys");
            let mut slots = [0u8; 1 << SLOT_BITS];
            let mut clash = false;
            let mut at = 0;
            while at < self.count {
                let slot = slot(self.words[at], self.lengths[at], candidate);
                if slots[slot] != 0 {
                    clash = true;
                }
                slots[slot] = at as u8 + 1;
                at += 1;
            }
            if !clash {
                self.slots = slots;
                self.multiplier = candidate;
                return;
            }
            candidate = candidate
                .wrapping_mul(0x5851_F42D_4C95_7F2D)
                .wrapping_add(0x14057B7E)
                | 1;
            tries += 1;
        }
    }

    /// Whether there are none.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The index of the field whose key is the first `length` bytes of `chunk`, when `length`
    /// is below [`WORD`].
    #[inline(always)]
    pub(crate) fn find_short(&self, chunk: &[u8; WORD], length: usize) -> Option<usize> {
        let word = u128::from_le_bytes(*chunk) & KEY_MASKS[length % WORD];
        let place = usize::from(self.slots[slot(word, length, self.multiplier)]);
        let place = place.checked_sub(1)?;
        if self.words.get(place) == Some(&word) && self.lengths.get(place) == Some(&length) {
            self.indexes.get(place).copied()
        } else {
            None
        }
    }

    /// The index of the field whose key is `key`, however long.
    pub(crate) fn find_any(&self, fields: &[Field; N], key: &[u8]) -> Option<usize> {
        self.indexes
            .iter()
            .take(self.count)
            .copied()
            .find(|&index| {
                fields
                    .get(index)
                    .is_some_and(|field| field.key.as_bytes() == key)
            })
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
        assert!(N < u8::MAX as usize, "too many fields");
        top.hash();
        let mut parent = 0;
        while parent < N {
            inside[parent].hash();
            parent += 1;
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
    #[inline(always)]
    pub(crate) fn members(&self, parent: Option<usize>) -> &Members<N> {
        match parent {
            None => &self.top,
            Some(parent) => self.inside.get(parent).unwrap_or(&Members::EMPTY),
        }
    }

    /// The index of the field among `members` whose key is `key`.
    #[inline]
    pub(crate) fn find(&self, members: &Members<N>, key: &[u8]) -> Option<usize> {
        match key.first_chunk::<WORD>() {
            Some(_) => members.find_any(&self.fields, key),
            None => {
                let mut chunk = [0; WORD];
                chunk
                    .iter_mut()
                    .zip(key)
                    .for_each(|(slot, &byte)| *slot = byte);
                members.find_short(&chunk, key.len())
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: FieldTable<9> = FieldTable::new([
        Field::top("type"),
        Field::top("part"),
        Field::top("t"),
        Field::top(""),
        Field::top("sessionID"),
        Field::top("a_key_longer_than_sixteen"),
        Field::top("a_key_longer_than_sixteen_too"),
        Field::inside(1, "type"),
        Field::inside(1, "thirteen_byte"),
    ]);

    #[test]
    fn keys_are_found_by_their_hash_as_by_comparing_them() {
        let probes: [&[u8]; 22] = [
            b"type",
            b"part",
            b"t",
            b"",
            b"sessionID",
            b"a_key_longer_than_sixteen",
            b"a_key_longer_than_sixteen_too",
            b"thirteen_byte",
            b"typ",
            b"typee",
            b"Type",
            b"tpye",
            b"ty\0e",
            b"\0",
            b"sessionId",
            b"sessionIDs",
            b"a_key_longer_than_sixteeN",
            b"a_key_longer_than_sixtee",
            b"a_key_longer_tha",
            b"thirteen_bytes",
            b"thirteen_byt",
            b"p",
        ];
        for parent in [None, Some(0), Some(1), Some(7), Some(42)] {
            let members = TABLE.members(parent);
            for probe in probes {
                let compared = TABLE
                    .fields()
                    .iter()
                    .position(|field| field.parent == parent && field.key.as_bytes() == probe);
                assert_eq!(
                    TABLE.find(members, probe),
                    compared,
                    "{probe:?} in {parent:?}"
                );
                // As the scanner reads a short key: from the line, with what follows it.
                if probe.len() < WORD {
                    let line = [probe, b"\":\"type\",\"part\":{}"].concat();
                    let chunk = line.first_chunk::<WORD>().unwrap();
                    assert_eq!(
                        members.find_short(chunk, probe.len()),
                        compared,
                        "{probe:?} in {parent:?}"
                    );
                }
            }
        }
    }
}

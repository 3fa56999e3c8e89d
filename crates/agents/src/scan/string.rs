//! Scanning the inside of a JSON string: finding its end eight bytes at a time, and checking
//! escapes exactly as `serde_json` does when it decodes a string.

use crate::scan::scanner::Stop;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The bytes of `word` below `limit` (at most 0x80) get their high bit set. Only the lowest set
/// bit is exact (a borrow can flag bytes above a real hit), which is all [`find_special`] uses.
fn bytes_below(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS
}

/// The bytes of `word` equal to `byte` get their high bit set (lowest set bit exact).
fn bytes_equal(word: u64, byte: u8) -> u64 {
    bytes_below(word ^ (ONES * u64::from(byte)), 1)
}

/// The index of the first byte at or after `from` that ends or interrupts a string's plain
/// run: a quote, a backslash or a control character. `bytes.len()` when there is none.
#[inline]
pub(crate) fn find_special(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let word = u64::from_le_bytes(*chunk);
        let hits = bytes_equal(word, b'"') | bytes_equal(word, b'\\') | bytes_below(word, 0x20);
        if hits != 0 {
            return at + (hits.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&byte) = bytes.get(at) {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            return at;
        }
        at += 1;
    }
    bytes.len()
}

/// Whether `bytes` holds any non-ASCII byte, and any control character (below 0x20), in one
/// pass the compiler can vectorize.
pub(crate) fn survey(bytes: &[u8]) -> (bool, bool) {
    let mut all = 0u8;
    let mut lowest = u8::MAX;
    for &byte in bytes {
        all |= byte;
        lowest = lowest.min(byte);
    }
    (all >= 0x80, lowest < 0x20)
}

/// The index of the first quote or backslash at or after `from`, or `bytes.len()`: the end of
/// a string's plain run in a line known to hold no control character. Most strings (keys, ids)
/// end within four words; a longer one (a tool's output) is searched with `memchr`'s vector
/// code.
#[inline(always)]
pub(crate) fn find_quote_or_backslash(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    for _ in 0..4 {
        let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) else {
            break;
        };
        let word = u64::from_le_bytes(*chunk);
        let hits = bytes_equal(word, b'"') | bytes_equal(word, b'\\');
        if hits != 0 {
            return at + (hits.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let rest = bytes.get(at..).unwrap_or_default();
    memchr::memchr2(b'"', b'\\', rest).map_or(bytes.len(), |offset| at + offset)
}

/// The value of four hex digits at `at`.
fn hex4(bytes: &[u8], at: usize) -> Result<u16, Stop> {
    let digits = bytes.get(at..at + 4).ok_or(Stop::Invalid)?;
    let mut value = 0u16;
    for &digit in digits {
        let nibble = match digit {
            b'0'..=b'9' => digit - b'0',
            b'a'..=b'f' => digit - b'a' + 10,
            b'A'..=b'F' => digit - b'A' + 10,
            _ => return Err(Stop::Invalid),
        };
        value = value << 4 | u16::from(nibble);
    }
    Ok(value)
}

/// Checks the escape whose letter is at `at` (just after the backslash) and returns the index
/// after it. Surrogates are accepted only as a proper pair; anything else about them is left
/// to the full parse.
pub(crate) fn escape(bytes: &[u8], at: usize) -> Result<usize, Stop> {
    match bytes.get(at) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(at + 1),
        Some(b'u') => {
            let unit = hex4(bytes, at + 1)?;
            match unit {
                0xD800..=0xDBFF => {
                    if bytes.get(at + 5..at + 7) != Some(b"\\u") {
                        return Err(Stop::Unsure);
                    }
                    match hex4(bytes, at + 7) {
                        Ok(0xDC00..=0xDFFF) => Ok(at + 11),
                        _ => Err(Stop::Unsure),
                    }
                }
                0xDC00..=0xDFFF => Err(Stop::Unsure),
                _ => Ok(at + 5),
            }
        }
        _ => Err(Stop::Invalid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_find(bytes: &[u8], from: usize) -> usize {
        (from..bytes.len())
            .find(|&at| matches!(bytes[at], b'"' | b'\\' | 0..=0x1f))
            .unwrap_or(bytes.len())
    }

    fn slow_find_quote(bytes: &[u8], from: usize) -> usize {
        (from..bytes.len())
            .find(|&at| matches!(bytes[at], b'"' | b'\\'))
            .unwrap_or(bytes.len())
    }

    #[test]
    fn the_word_search_finds_what_a_byte_loop_finds() {
        let long = [b"0123456789abcdef".repeat(5).as_slice(), b"\\ end\""].concat();
        let samples: [&[u8]; 9] = [
            &long,
            b"",
            b"plain text with no end",
            b"0123456\"89",
            b"\x80\xff\xfe\x7f\x20\x21 ok\\",
            b"\x1f",
            b"ab\x00cd\"",
            "naïve café — 東京\"".as_bytes(),
            b"\x21\x21\x21\x21\x21\x21\x21\x20\x1f\"",
        ];
        for sample in samples {
            for from in 0..=sample.len() {
                assert_eq!(
                    find_special(sample, from),
                    slow_find(sample, from),
                    "{sample:?} from {from}"
                );
                assert_eq!(
                    find_quote_or_backslash(sample, from),
                    slow_find_quote(sample, from),
                    "{sample:?} from {from}"
                );
            }
        }
    }

    #[test]
    fn escapes_are_checked_like_serde_json() {
        assert_eq!(escape(b"n", 0), Ok(1));
        assert_eq!(escape(b"u00e9", 0), Ok(5));
        assert_eq!(escape(b"ud83d\\ude00", 0), Ok(11));
        assert_eq!(escape(b"x", 0), Err(Stop::Invalid));
        assert_eq!(escape(b"", 0), Err(Stop::Invalid));
        assert_eq!(escape(b"u12g4", 0), Err(Stop::Invalid));
        assert_eq!(escape(b"u12", 0), Err(Stop::Invalid));
        assert_eq!(escape(b"ud83d", 0), Err(Stop::Unsure));
        assert_eq!(escape(b"ude00", 0), Err(Stop::Unsure));
        assert_eq!(escape(b"ud83d\\u0041", 0), Err(Stop::Unsure));
    }
}

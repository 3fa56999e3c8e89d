//! Checking a JSON number: the grammar exactly, and its range only where that is cheap.
//!
//! `serde_json` parses every number into a `Value`, and rejects one whose magnitude overflows
//! an `f64` (`1e400`). A number with at most [`SAFE_MAGNITUDE`] digits before the point, after
//! adding a positive exponent, is far below `f64::MAX` whatever rounding does; a negative
//! exponent only makes a number smaller, and `serde_json` flushes it to zero rather than fail.
//! Anything bigger is left to the full parse.

use crate::scan::scanner::Stop;

/// The largest decimal magnitude (digits before the point plus exponent) accepted without a
/// full parse: 10^300 is well inside `f64`.
const SAFE_MAGNITUDE: u64 = 300;

/// The first byte of `word` (little-endian) that is not an ASCII digit, as its lowest set bit.
/// A byte is a digit when its high nibble is 3 both before and after adding 6; adding can carry
/// into the next byte only from a byte that is not a digit, so the lowest hit is exact.
#[inline(always)]
fn non_digits(word: u64) -> u64 {
    const HIGH_NIBBLES: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    ((word & HIGH_NIBBLES) ^ THREES) | ((word.wrapping_add(SIXES) & HIGH_NIBBLES) ^ THREES)
}

/// The index of the first byte at or after `at` that is not an ASCII digit (`bytes.len()` if
/// none), eight bytes at a time.
#[inline(always)]
pub(crate) fn digits_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let hits = non_digits(u64::from_le_bytes(*chunk));
        if hits != 0 {
            return at + (hits.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while bytes.get(at).is_some_and(u8::is_ascii_digit) {
        at += 1;
    }
    at
}

/// How many ASCII digits `chunk` starts with.
#[inline(always)]
fn leading_digits(chunk: &[u8; 16]) -> usize {
    let (low, high) = chunk.split_at(8);
    let word = |half: &[u8]| u64::from_le_bytes(half.try_into().unwrap_or_default());
    match non_digits(word(low)) {
        0 => match non_digits(word(high)) {
            0 => 16,
            hits => 8 + (hits.trailing_zeros() / 8) as usize,
        },
        hits => (hits.trailing_zeros() / 8) as usize,
    }
}

/// Checks the number starting at `at` and returns the index after it. What follows the number
/// is the caller's to check (a delimiter, whitespace or the end).
///
/// A positive integer of fewer than 16 digits, what streams hold nearly always (timestamps,
/// counts), is read from one 16-byte chunk here; anything else goes through
/// [`number_in_full`].
#[inline(always)]
pub(crate) fn number(bytes: &[u8], at: usize) -> Result<usize, Stop> {
    if let Some(length) = bytes
        .get(at..at + 16)
        .and_then(<[u8]>::first_chunk::<16>)
        .and_then(integer)
    {
        return Ok(at + length);
    }
    number_in_full(bytes, at)
}

/// The length of the number that `chunk` starts with, when it is a positive integer of fewer
/// than 16 digits (no sign, fraction or exponent): valid, and far inside `f64`'s range.
#[inline(always)]
pub(crate) fn integer(chunk: &[u8; 16]) -> Option<usize> {
    let digits = leading_digits(chunk);
    let plain = digits < 16
        && chunk[0] != b'0'
        && digits > 0
        && !matches!(chunk[digits], b'.' | b'e' | b'E');
    plain.then_some(digits)
}

/// [`number`] for any number: sign, fraction, exponent, and the magnitudes left to the full
/// parse.
#[inline(never)]
fn number_in_full(bytes: &[u8], at: usize) -> Result<usize, Stop> {
    let byte = |at: usize| bytes.get(at).copied().unwrap_or(0);
    let start = if byte(at) == b'-' { at + 1 } else { at };
    let mut at = match byte(start) {
        // `serde_json` refuses leading zeros ("01").
        b'0' if byte(start + 1).is_ascii_digit() => return Err(Stop::Invalid),
        b'0' => start + 1,
        b'1'..=b'9' => digits_end(bytes, start + 1),
        _ => return Err(Stop::Invalid),
    };
    let whole_digits = (at - start) as u64;
    // Integers, nearly all numbers in a stream, end here.
    if !matches!(byte(at), b'.' | b'e' | b'E') {
        return if whole_digits > SAFE_MAGNITUDE {
            Err(Stop::Unsure)
        } else {
            Ok(at)
        };
    }
    if byte(at) == b'.' {
        let end = digits_end(bytes, at + 1);
        if end == at + 1 {
            return Err(Stop::Invalid);
        }
        at = end;
    }
    let mut magnitude = whole_digits;
    if let b'e' | b'E' = byte(at) {
        at += 1;
        let negative = byte(at) == b'-';
        if matches!(byte(at), b'-' | b'+') {
            at += 1;
        }
        let end = digits_end(bytes, at);
        if end == at {
            return Err(Stop::Invalid);
        }
        if !negative {
            let exponent =
                bytes
                    .get(at..end)
                    .unwrap_or_default()
                    .iter()
                    .fold(0u64, |value, digit| {
                        value
                            .saturating_mul(10)
                            .saturating_add(u64::from(digit - b'0'))
                    });
            magnitude = magnitude.saturating_add(exponent);
        }
        at = end;
    }
    if magnitude > SAFE_MAGNITUDE {
        return Err(Stop::Unsure);
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_is_exact_and_big_magnitudes_are_left_to_serde() {
        let cases: [(&[u8], Result<usize, Stop>); 17] = [
            (b"0", Ok(1)),
            (b"-0", Ok(2)),
            (b"1796003380321,", Ok(13)),
            (b"0.00336}", Ok(7)),
            (b"1.2e-7", Ok(6)),
            (b"1E+2", Ok(4)),
            (b"1e-99999999999999999999", Ok(23)),
            (b"01", Err(Stop::Invalid)),
            (b"-", Err(Stop::Invalid)),
            (b"-a", Err(Stop::Invalid)),
            (b"1.", Err(Stop::Invalid)),
            (b"1.e5", Err(Stop::Invalid)),
            (b"1e", Err(Stop::Invalid)),
            (b"1e+", Err(Stop::Invalid)),
            (b"1e400", Err(Stop::Unsure)),
            (b"0e299", Ok(5)),
            (b"9e300", Err(Stop::Unsure)),
        ];
        for (text, expected) in cases {
            assert_eq!(
                number(text, 0),
                expected,
                "{}",
                String::from_utf8_lossy(text)
            );
            // The same number in a longer line, where the 16-byte reading applies.
            let mut padded = text.to_vec();
            padded.extend_from_slice(b",0000000000000000");
            assert_eq!(
                number(&padded, 0),
                expected,
                "{}",
                String::from_utf8_lossy(&padded)
            );
        }
    }

    #[test]
    fn the_word_digit_search_finds_what_a_byte_loop_finds() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let length = (next() % 24) as usize;
            // Mostly digits, with the bytes around them and any byte now and then.
            let bytes: Vec<u8> = (0..length)
                .map(|_| match next() % 8 {
                    0 => (next() % 256) as u8,
                    1 => [b'/', b':', b'.', b'e', 0xff, 0xfa, 0x30 + 0x80][(next() % 7) as usize],
                    _ => b'0' + (next() % 10) as u8,
                })
                .collect();
            for from in 0..=length {
                let slow = (from..length)
                    .find(|&at| !bytes[at].is_ascii_digit())
                    .unwrap_or(length);
                assert_eq!(digits_end(&bytes, from), slow, "{bytes:?} from {from}");
            }
            if let Some(chunk) = bytes.first_chunk::<16>() {
                let slow = bytes
                    .iter()
                    .take(16)
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                assert_eq!(leading_digits(chunk), slow, "{bytes:?}");
            }
            assert_eq!(number(&bytes, 0), number_in_full(&bytes, 0), "{bytes:?}");
        }
    }
}

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

/// Counts the ASCII digits from `at`, returning the index after them and how many there were.
#[inline(always)]
fn digits(bytes: &[u8], at: usize) -> (usize, u64) {
    let count = bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| byte.is_ascii_digit())
        .count();
    (at + count, count as u64)
}

/// Checks the number starting at `at` and returns the index after it. What follows the number
/// is the caller's to check (a delimiter, whitespace or the end).
pub(crate) fn number(bytes: &[u8], mut at: usize) -> Result<usize, Stop> {
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    let whole_digits;
    match bytes.get(at) {
        Some(b'0') => {
            at += 1;
            whole_digits = 1;
            // `serde_json` refuses leading zeros ("01").
            if bytes.get(at).is_some_and(u8::is_ascii_digit) {
                return Err(Stop::Invalid);
            }
        }
        Some(b'1'..=b'9') => (at, whole_digits) = digits(bytes, at),
        _ => return Err(Stop::Invalid),
    }
    if bytes.get(at) == Some(&b'.') {
        let (end, count) = digits(bytes, at + 1);
        if count == 0 {
            return Err(Stop::Invalid);
        }
        at = end;
    }
    let mut magnitude = whole_digits;
    if let Some(b'e' | b'E') = bytes.get(at) {
        at += 1;
        let negative = match bytes.get(at) {
            Some(b'-') => {
                at += 1;
                true
            }
            Some(b'+') => {
                at += 1;
                false
            }
            _ => false,
        };
        let start = at;
        let (end, count) = digits(bytes, at);
        if count == 0 {
            return Err(Stop::Invalid);
        }
        at = end;
        if !negative {
            let exponent = bytes[start..end].iter().fold(0u64, |value, digit| {
                value
                    .saturating_mul(10)
                    .saturating_add(u64::from(digit - b'0'))
            });
            magnitude = magnitude.saturating_add(exponent);
        }
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
        }
    }
}

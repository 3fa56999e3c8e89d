//! Scanning the inside of a JSON string: finding its end sixteen bytes at a time, and checking
//! escapes exactly as `serde_json` does when it decodes a string.
//!
//! A string's plain run ends at a quote, a backslash, or (only in a line that holds any) a
//! control character. [`first_stop`] finds the first of them in a 16-byte chunk: with SSE2,
//! which every x86_64 processor has, in a handful of instructions; elsewhere with the same
//! search on two 64-bit words ([`portable`], which tests hold equal to the SSE2 one). The SSE2
//! version is the crate's one `unsafe` block; it earns it: with the portable search instead,
//! summarizing a launcher stream takes 7.4 instructions per byte rather than 5.9, and a stream
//! of large tool outputs 5.5 rather than 4.2 (callgrind, `ganger summarize`).

use crate::scan::scanner::Stop;

/// How many bytes [`first_stop`] looks at.
pub(crate) const CHUNK: usize = 16;

/// The index of the first quote, backslash or (when `controls`) control character in `chunk`,
/// or [`CHUNK`] when there is none.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
pub(crate) fn first_stop(chunk: &[u8; CHUNK], controls: bool) -> usize {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: the `cfg` above compiles this only where SSE2 is enabled (every x86_64 target
    // enables it), so the intrinsics run on a processor that has them; the load reads the 16
    // bytes of `chunk`, which the reference makes readable, and needs no alignment.
    let mask = unsafe {
        let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
        let quotes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslashes = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        let mut stops = _mm_or_si128(quotes, backslashes);
        if controls {
            // Below 0x20 exactly when the unsigned minimum with 0x1f is the byte itself.
            let low = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
            stops = _mm_or_si128(stops, low);
        }
        _mm_movemask_epi8(stops)
    };
    (mask | 1 << CHUNK).trailing_zeros() as usize
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(crate) use portable::first_stop;

/// [`first_stop`] without vector instructions, eight bytes at a time.
pub(crate) mod portable {
    use super::CHUNK;

    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    /// The bytes of `word` below `limit` (at most 0x80) get their high bit set. Only the
    /// lowest set bit is exact (a borrow can flag bytes above a real hit), which is all
    /// [`first_stop`] uses.
    #[inline(always)]
    fn bytes_below(word: u64, limit: u8) -> u64 {
        word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS
    }

    /// The bytes of `word` equal to `byte` get their high bit set (lowest set bit exact).
    #[inline(always)]
    fn bytes_equal(word: u64, byte: u8) -> u64 {
        bytes_below(word ^ (ONES * u64::from(byte)), 1)
    }

    /// The stops of one little-endian word, as the lowest set bit.
    #[inline(always)]
    fn stops(word: u64, controls: bool) -> u64 {
        let mut hits = bytes_equal(word, b'"') | bytes_equal(word, b'\\');
        if controls {
            hits |= bytes_below(word, 0x20);
        }
        hits
    }

    /// The index of the first quote, backslash or (when `controls`) control character in
    /// `chunk`, or [`CHUNK`] when there is none.
    #[cfg_attr(
        all(target_arch = "x86_64", target_feature = "sse2", not(test)),
        expect(dead_code, reason = "x86_64 uses SSE2; tests compare the two")
    )]
    #[inline(always)]
    pub(crate) fn first_stop(chunk: &[u8; CHUNK], controls: bool) -> usize {
        let (low, high) = chunk.split_at(CHUNK / 2);
        let word = |half: &[u8]| u64::from_le_bytes(half.try_into().unwrap_or_default());
        let low = stops(word(low), controls);
        if low != 0 {
            return (low.trailing_zeros() / 8) as usize;
        }
        match stops(word(high), controls) {
            0 => CHUNK,
            high => CHUNK / 2 + (high.trailing_zeros() / 8) as usize,
        }
    }
}

/// The index of the first byte at or after `from` that ends or interrupts a string's plain
/// run: a quote, a backslash, or (when `controls`) a control character; `bytes.len()` when
/// there is none. Most strings (keys, ids) end within a few chunks; when there are no control
/// characters to look for, a longer one (a tool's output) is searched with `memchr`'s vector
/// code.
#[inline(always)]
pub(crate) fn find_stop(bytes: &[u8], from: usize, controls: bool) -> usize {
    let mut at = from;
    let mut chunks = 0;
    while let Some(chunk) = bytes
        .get(at..at + CHUNK)
        .and_then(|chunk| chunk.first_chunk())
    {
        let stop = first_stop(chunk, controls);
        if stop < CHUNK {
            return at + stop;
        }
        at += CHUNK;
        chunks += 1;
        if chunks == 4 && !controls {
            let rest = bytes.get(at..).unwrap_or_default();
            return memchr::memchr2(b'"', b'\\', rest).map_or(bytes.len(), |offset| at + offset);
        }
    }
    find_stop_in_tail(bytes, at, controls)
}

/// [`find_stop`] in the last bytes of a line, fewer than a chunk: they are copied into one,
/// padded with quotes, and a stop in the padding is the end of the line.
#[inline(never)]
fn find_stop_in_tail(bytes: &[u8], at: usize, controls: bool) -> usize {
    let rest = bytes.get(at..).unwrap_or_default();
    let mut chunk = [b'"'; CHUNK];
    chunk
        .iter_mut()
        .zip(rest)
        .for_each(|(slot, &byte)| *slot = byte);
    (at + first_stop(&chunk, controls)).min(bytes.len())
}

/// How many bytes [`survey`] takes at a time.
const SURVEY: usize = 64;

/// Whether `bytes` holds any non-ASCII byte, and any control character (below 0x20), in one
/// pass the compiler vectorizes: 64 bytes at a time, the last 64 overlapping the ones before
/// (the bitwise or and the minimum do not mind seeing a byte twice), so that no byte is left
/// to a loop of its own.
#[inline]
pub(crate) fn survey(bytes: &[u8]) -> (bool, bool) {
    let Some(last) = bytes.last_chunk::<SURVEY>() else {
        return survey_bytes(bytes);
    };
    let mut all = [0u8; SURVEY];
    let mut lowest = [u8::MAX; SURVEY];
    let mut take = |chunk: &[u8; SURVEY]| {
        for ((all, lowest), &byte) in all.iter_mut().zip(lowest.iter_mut()).zip(chunk) {
            *all |= byte;
            *lowest = (*lowest).min(byte);
        }
    };
    let (chunks, _) = bytes.as_chunks::<SURVEY>();
    chunks.iter().for_each(&mut take);
    take(last);
    (
        all.iter().any(|&byte| byte >= 0x80),
        lowest.iter().any(|&byte| byte < 0x20),
    )
}

/// [`survey`] one byte at a time, for lines shorter than its chunks.
fn survey_bytes(bytes: &[u8]) -> (bool, bool) {
    let mut all = 0u8;
    let mut lowest = u8::MAX;
    for &byte in bytes {
        all |= byte;
        lowest = lowest.min(byte);
    }
    (all >= 0x80, lowest < 0x20)
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

    fn slow_find(bytes: &[u8], from: usize, controls: bool) -> usize {
        (from..bytes.len())
            .find(|&at| matches!(bytes[at], b'"' | b'\\') || (controls && bytes[at] < 0x20))
            .unwrap_or(bytes.len())
    }

    #[test]
    fn the_chunk_search_finds_what_a_byte_loop_finds() {
        let long = [b"0123456789abcdef".repeat(5).as_slice(), b"\\ end\""].concat();
        let very_long = [b"0123456789abcdef".repeat(9).as_slice(), b"\x01\""].concat();
        let samples: [&[u8]; 11] = [
            &long,
            &very_long,
            b"",
            b"plain text with no end",
            b"0123456\"89",
            b"\x80\xff\xfe\x7f\x20\x21 ok\\",
            b"\x1f",
            b"ab\x00cd\"",
            "naïve café — 東京\"".as_bytes(),
            b"\x21\x21\x21\x21\x21\x21\x21\x20\x1f\"",
            b"\x21\x21\x21\x21\x21\x21\x21\x21\x21\x21\x21\x21\x21\x21\x21\x20\x1f\"",
        ];
        for sample in samples {
            for from in 0..=sample.len() {
                for controls in [false, true] {
                    assert_eq!(
                        find_stop(sample, from, controls),
                        slow_find(sample, from, controls),
                        "{sample:?} from {from}, controls {controls}"
                    );
                }
            }
        }
    }

    /// A small deterministic sequence of bytes, mostly the ones string scanning cares about.
    fn bytes(seed: &mut u64, length: usize) -> Vec<u8> {
        (0..length)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                let pick = *seed >> 32;
                match pick % 8 {
                    0 => (pick >> 8) as u8,
                    1 => {
                        [b'"', b'\\', 0x1f, 0x20, 0x00, 0x7f, 0x80, 0xff][(pick >> 8) as usize % 8]
                    }
                    _ => b'a' + (pick >> 8) as u8 % 26,
                }
            })
            .collect()
    }

    #[test]
    fn the_vector_and_portable_chunk_searches_agree() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..50_000 {
            let chunk: [u8; CHUNK] = bytes(&mut seed, CHUNK).try_into().unwrap();
            for controls in [false, true] {
                let slow = chunk
                    .iter()
                    .position(|&byte| matches!(byte, b'"' | b'\\') || (controls && byte < 0x20))
                    .unwrap_or(CHUNK);
                assert_eq!(first_stop(&chunk, controls), slow, "{chunk:?}");
                assert_eq!(portable::first_stop(&chunk, controls), slow, "{chunk:?}");
            }
        }
    }

    #[test]
    fn the_survey_sees_what_a_byte_loop_sees() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        for length in (0..300).chain([511, 512, 513, 4096]) {
            for _ in 0..20 {
                // Mostly plain letters, so that a single odd byte anywhere decides.
                let mut line = vec![b'a'; length];
                let odd = bytes(&mut seed, 2);
                if length > 0 {
                    let at = usize::from(odd[0]) * length / 256;
                    line[at] = odd[1];
                }
                let slow = (
                    line.iter().any(|&byte| byte >= 0x80),
                    line.iter().any(|&byte| byte < 0x20),
                );
                assert_eq!(survey(&line), slow, "{length}: {odd:?}");
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

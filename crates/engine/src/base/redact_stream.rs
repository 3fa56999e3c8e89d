//! Redacting a stream that arrives in pieces of any size (an agent's stdout and stderr, a
//! check's output), in bounded memory: a line of any length is redacted as it passes, never
//! gathered whole. A key never holds a newline, so everything up to the last `\n` of what has
//! arrived can be redacted and let through at once; of an unfinished line, only the last
//! [`Redactor::longest_match`] bytes less one are held back, where a key cut by the end of a
//! read could begin. A key is therefore found whole however the reads cut it, and whatever a
//! reader of the output cuts (the line cap of a parser, a tail) only ever cuts redacted text.

use crate::base::redact::Redactor;
use std::io::Read;

/// A [`Redactor`] over a stream.
#[derive(Debug, Default)]
pub struct StreamRedactor {
    redactor: Redactor,
    /// The end of an unfinished line where a key may begin, not yet let through.
    held: Vec<u8>,
    /// How many bytes of an unfinished line are held back at most.
    hold: usize,
}

impl StreamRedactor {
    pub fn new(redactor: Redactor) -> StreamRedactor {
        StreamRedactor {
            hold: redactor.longest_match().saturating_sub(1),
            redactor,
            held: Vec::new(),
        }
    }

    /// Appends to `out` what of the stream can be let through once `data` has arrived.
    pub fn push(&mut self, data: &[u8], out: &mut Vec<u8>) {
        if self.redactor.is_empty() {
            out.extend_from_slice(data);
            return;
        }
        let mut joined = std::mem::take(&mut self.held);
        let text: &[u8] = if joined.is_empty() {
            data
        } else {
            joined.extend_from_slice(data);
            &joined
        };
        let spans = self.redactor.spans(text);
        // Let through everything but the last `hold` bytes, or up to the last newline if that
        // is later; a key that starts before that point is in `text` whole.
        let mut through = text.len().saturating_sub(self.hold);
        if let Some(newline) = memchr::memrchr(b'\n', &text[through..]) {
            through += newline + 1;
        }
        let mut done = 0;
        for span in &spans {
            if span.start >= through {
                break;
            }
            through = through.max(span.end);
            done += 1;
        }
        self.redactor
            .replace_into(&text[..through], &spans[..done], out);
        self.held = text[through..].to_vec();
    }

    /// Appends to `out` what was held back: the stream has ended.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let held = std::mem::take(&mut self.held);
        let spans = self.redactor.spans(&held);
        self.redactor.replace_into(&held, &spans, out);
    }
}

/// How much is read from a pipe at a time by [`copy_redacted`].
const READ_SIZE: usize = 256 * 1024;

/// Reads `pipe` to its end, handing what can be let through after each read to `out`,
/// redacted, and `true` with the last of it.
pub(crate) fn copy_redacted(
    mut pipe: impl Read,
    redactor: Redactor,
    out: &mut dyn FnMut(&[u8], bool),
) {
    let mut redacting = StreamRedactor::new(redactor);
    let mut buffer = vec![0u8; READ_SIZE];
    let mut clean = Vec::with_capacity(READ_SIZE);
    loop {
        let read = match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        clean.clear();
        redacting.push(&buffer[..read], &mut clean);
        out(&clean, false);
    }
    clean.clear();
    redacting.finish(&mut clean);
    out(&clean, true);
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-secret-0123456789";

    /// `data` through a stream redactor in pieces of `size` bytes, and the most it held.
    fn redact_in_pieces(redactor: &Redactor, data: &[u8], size: usize) -> (Vec<u8>, usize) {
        let mut stream = StreamRedactor::new(redactor.clone());
        let mut out = Vec::new();
        let mut most = 0;
        for piece in data.chunks(size) {
            stream.push(piece, &mut out);
            most = most.max(stream.held.len());
        }
        stream.finish(&mut out);
        (out, most)
    }

    #[test]
    fn a_key_is_found_however_the_reads_cut_it_and_little_is_held() {
        let redactor = Redactor::new([("mock", KEY)]);
        let mut data = Vec::new();
        for i in 0..50 {
            data.extend_from_slice(format!("line {i} {KEY}{KEY} x{KEY}\n").as_bytes());
            data.extend(std::iter::repeat_n(b'z', i * 37));
            data.extend_from_slice(KEY.as_bytes());
            // JSON-escaped, as a stream may hold it.
            data.extend_from_slice(format!("\\u0073{}\\u002D", &KEY[1..]).as_bytes());
        }
        let whole = redactor.redact(&data).into_owned();
        assert!(!String::from_utf8_lossy(&whole).contains(&KEY[1..]));
        for size in 1..=3 * KEY.len() {
            let (out, most) = redact_in_pieces(&redactor, &data, size);
            assert_eq!(out, whole, "pieces of {size}");
            assert!(
                most < redactor.longest_match(),
                "held {most} in pieces of {size}"
            );
        }
        let (out, _) = redact_in_pieces(&redactor, &data, 4096);
        assert_eq!(out, whole);
    }

    #[test]
    fn complete_lines_are_let_through_at_once_and_nothing_is_held_without_keys() {
        let mut stream = StreamRedactor::new(Redactor::new([("mock", KEY)]));
        let mut out = Vec::new();
        stream.push(b"a whole line\nand a piece", &mut out);
        assert_eq!(out, b"a whole line\n");
        stream.push(b" more\n", &mut out);
        assert_eq!(out, b"a whole line\nand a piece more\n");
        assert!(stream.held.is_empty());
        let mut plain = StreamRedactor::new(Redactor::default());
        let mut out = Vec::new();
        plain.push(b"no newline", &mut out);
        assert_eq!(out, b"no newline");
    }
}

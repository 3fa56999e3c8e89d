//! How a stream is cut into the lines a parser sees: split at `\n`, the `\r` of a `\r\n` ending
//! dropped, blank lines skipped, and a line longer than [`MAX_LINE`] not read at all (it is
//! reported as [`Line::TooLong`], so the summary can count it; the raw file keeps its bytes).
//! The cap is what keeps a round host and `summarize` in bounded memory whatever an agent
//! prints: without it, one line with no newline grows a buffer until the machine runs out.
//!
//! A round host reading a live stream ([`LineCutter`], fed as the pipe delivers) and
//! `summarize` reading a finished file ([`stream_lines`], or the cutter over blocks of a
//! reader) cut the same way, so they feed parsers the same lines.

/// The longest line, in bytes without its `\n`, that is given to a parser. Agents' event lines
/// are far shorter (their CLIs clip tool output to tens of kilobytes); a line past this is
/// runaway output, not an event.
pub const MAX_LINE: usize = 8 << 20;

/// A line of a stream as parsers see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A non-blank line of at most [`MAX_LINE`] bytes, as [`line_content`] cuts it.
    Content(&'a [u8]),
    /// A line longer than [`MAX_LINE`] bytes (this many, without its `\n`): not read.
    TooLong(u64),
}

/// The line a parser should see for one raw line (without its `\n`), or `None` when the line
/// is blank (empty or ASCII whitespace only) and must be skipped.
pub fn line_content(raw: &[u8]) -> Option<&[u8]> {
    let line = raw.strip_suffix(b"\r").unwrap_or(raw);
    match line.first() {
        None => None,
        Some(first) if !first.is_ascii_whitespace() => Some(line),
        Some(_) => (!line.iter().all(u8::is_ascii_whitespace)).then_some(line),
    }
}

/// What one raw line (without its `\n`) is to a parser, if anything.
fn classify(raw: &[u8]) -> Option<Line<'_>> {
    if raw.len() > MAX_LINE {
        return Some(Line::TooLong(raw.len() as u64));
    }
    line_content(raw).map(Line::Content)
}

/// The lines of a whole stream, as parsers see them: blank lines skipped, lines over
/// [`MAX_LINE`] reported as such. A last line without a final `\n` is included.
pub fn stream_lines(data: &[u8]) -> impl Iterator<Item = Line<'_>> {
    let mut rest = data;
    std::iter::from_fn(move || {
        while !rest.is_empty() {
            let raw = match memchr::memchr(b'\n', rest) {
                Some(end) => {
                    let (raw, tail) = rest.split_at(end);
                    rest = &tail[1..];
                    raw
                }
                None => std::mem::take(&mut rest),
            };
            if let Some(line) = classify(raw) {
                return Some(line);
            }
        }
        None
    })
}

/// The lines of a whole stream that a parser reads ([`stream_lines`] without the lines over
/// [`MAX_LINE`]).
pub fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    stream_lines(data).filter_map(|line| match line {
        Line::Content(content) => Some(content),
        Line::TooLong(_) => None,
    })
}

/// Cuts a stream that arrives in pieces into the same lines as [`stream_lines`], holding at
/// most [`MAX_LINE`] bytes of an unfinished line: the bytes of a longer one are counted and
/// dropped until its end.
#[derive(Debug, Default)]
pub struct LineCutter {
    /// The start of a line whose end has not come yet (empty once it is too long).
    held: Vec<u8>,
    /// How long the unfinished line is so far.
    length: u64,
    /// How many lines have ended.
    number: u64,
}

impl LineCutter {
    /// Cuts `data`, the next piece of the stream, handing each line it finishes to `each` with
    /// its number (the count of lines in the stream up to it, blank ones included).
    pub fn push(&mut self, data: &[u8], mut each: impl FnMut(u64, Line<'_>)) {
        let mut data = data;
        if self.length > 0 {
            let Some(end) = memchr::memchr(b'\n', data) else {
                self.hold(data);
                return;
            };
            self.hold(&data[..end]);
            self.end_line(&mut each);
            data = &data[end + 1..];
        }
        // Whole lines are cut in place; only the unfinished last one is copied.
        let mut rest = data;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.number += 1;
            if let Some(line) = classify(&rest[..end]) {
                each(self.number, line);
            }
            rest = &rest[end + 1..];
        }
        self.hold(rest);
    }

    /// The end of the stream: hands over its last line if it had no `\n`.
    pub fn finish(&mut self, mut each: impl FnMut(u64, Line<'_>)) {
        if self.length > 0 {
            self.end_line(&mut each);
        }
    }

    fn hold(&mut self, bytes: &[u8]) {
        self.length += bytes.len() as u64;
        if self.length > MAX_LINE as u64 {
            if !self.held.is_empty() {
                self.held = Vec::new();
            }
        } else {
            self.held.extend_from_slice(bytes);
        }
    }

    fn end_line(&mut self, each: &mut impl FnMut(u64, Line<'_>)) {
        self.number += 1;
        if self.length > MAX_LINE as u64 {
            each(self.number, Line::TooLong(self.length));
        } else if let Some(content) = line_content(&self.held) {
            each(self.number, Line::Content(content));
        }
        self.length = 0;
        self.held.clear();
        if self.held.capacity() > 1 << 20 {
            // A long line's buffer is not kept for the short ones after it.
            self.held = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_are_skipped_and_crlf_endings_stripped() {
        let data = b"a\r\n\n  \r\n\t\nb c \r\r\nlast";
        let got: Vec<&[u8]> = lines(data).collect();
        assert_eq!(got, vec![&b"a"[..], b"b c \r", b"last"]);
    }

    #[test]
    fn a_line_is_content_unless_it_is_all_whitespace() {
        assert_eq!(line_content(b""), None);
        assert_eq!(line_content(b"\r"), None);
        assert_eq!(line_content(b" \x0c\t"), None);
        assert_eq!(line_content(b" {}"), Some(&b" {}"[..]));
        assert_eq!(line_content(b"{}\r"), Some(&b"{}"[..]));
    }

    fn describe(line: Line<'_>) -> String {
        match line {
            Line::Content(content) => String::from_utf8_lossy(content).into_owned(),
            Line::TooLong(length) => format!("too long: {length}"),
        }
    }

    /// What the cutter makes of `data` handed over in pieces of `size` bytes.
    fn cut_in_pieces(data: &[u8], size: usize) -> Vec<String> {
        let mut cutter = LineCutter::default();
        let mut got = Vec::new();
        let mut numbers = Vec::new();
        for piece in data.chunks(size) {
            cutter.push(piece, |number, line| {
                numbers.push(number);
                got.push(describe(line));
            });
        }
        cutter.finish(|number, line| {
            numbers.push(number);
            got.push(describe(line));
        });
        // Numbered as the stream's lines, blank ones counted.
        assert_eq!(numbers, [1, 3, 4, 5, 7]);
        got
    }

    #[test]
    fn a_line_over_the_cap_is_reported_not_read_however_the_stream_is_cut() {
        let mut data = b"first\n\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', MAX_LINE));
        data.push(b'\n');
        data.extend(std::iter::repeat_n(b'y', MAX_LINE + 1));
        data.extend_from_slice(b"\nafter\r\n  \nlast");
        let expected = vec![
            "first".to_owned(),
            "x".repeat(MAX_LINE),
            format!("too long: {}", MAX_LINE + 1),
            "after".to_owned(),
            "last".to_owned(),
        ];
        let whole: Vec<String> = stream_lines(&data).map(describe).collect();
        assert_eq!(whole, expected);
        for size in [1 << 20, 4096, 7, MAX_LINE + 3, data.len()] {
            assert_eq!(cut_in_pieces(&data, size), expected, "pieces of {size}");
        }
        // `lines` leaves out the long one.
        assert_eq!(lines(&data).count(), 4);
    }

    #[test]
    fn an_endless_line_holds_no_more_than_the_cap() {
        let mut cutter = LineCutter::default();
        let block = vec![0u8; 1 << 20];
        for _ in 0..20 {
            cutter.push(&block, |_, _| panic!("no line ended"));
            assert!(cutter.held.capacity() <= 2 * MAX_LINE);
        }
        let mut ended = Vec::new();
        cutter.push(b"\nnext\n", |_, line| ended.push(describe(line)));
        assert_eq!(
            ended,
            [format!("too long: {}", 20u64 << 20), "next".to_owned()]
        );
        assert_eq!(cutter.held.capacity(), 0);
    }
}

//! How a stream is cut into the lines a parser sees: split at `\n`, the `\r` of a `\r\n` ending
//! dropped, blank lines skipped. A round host reading a live stream and `summarize` reading a
//! finished file both go through [`line_content`], so they feed parsers the same lines.

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

/// The non-blank lines of a whole stream, as [`line_content`] cuts them. A last line without a
/// final `\n` is included.
pub fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
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
            if let Some(line) = line_content(raw) {
                return Some(line);
            }
        }
        None
    })
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
}

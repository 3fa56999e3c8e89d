//! What of a check's output is kept with the round and sent back to the agent: the end of it,
//! where test runners and compilers put their verdicts, without terminal colours, with
//! over-long lines cut, and within a line and character budget.

/// The most lines of a tail.
pub(crate) const TAIL_LINES: usize = 60;
/// The most characters of a tail.
pub(crate) const TAIL_CHARS: usize = 4000;
/// The most characters of one line of a tail.
const LINE_CHARS: usize = 300;

/// The tail of `output`.
pub(crate) fn tail(output: &[u8]) -> String {
    let text = String::from_utf8_lossy(output);
    let plain = strip_ansi(&text);
    let lines: Vec<String> = plain
        .lines()
        .map(|line| line.trim_end().replace('\r', ""))
        .collect();
    let end = lines
        .iter()
        .rposition(|line| !line.is_empty())
        .map_or(0, |i| i + 1);
    let mut kept: Vec<String> = Vec::new();
    let mut chars = 0;
    for line in lines[..end].iter().rev() {
        let line = cut(line);
        let size = line.chars().count() + 1;
        if kept.len() == TAIL_LINES || chars + size > TAIL_CHARS {
            kept.push(format!("[{} earlier lines left out]", end - kept.len()));
            break;
        }
        chars += size;
        kept.push(line);
    }
    kept.reverse();
    kept.join("\n")
}

fn cut(line: &str) -> String {
    if line.chars().count() <= LINE_CHARS {
        return line.to_owned();
    }
    let head: String = line.chars().take(LINE_CHARS).collect();
    format!("{head} [...]")
}

/// `text` without ANSI escape sequences (colours, cursor moves).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_end_without_colours_and_says_what_it_left_out() {
        let mut output = String::new();
        for i in 0..100 {
            output.push_str(&format!("\u{1b}[31mline {i}\u{1b}[0m\n"));
        }
        output.push_str("\n\n");
        let tail = tail(output.as_bytes());
        let lines: Vec<&str> = tail.lines().collect();
        assert_eq!(lines.len(), TAIL_LINES + 1);
        assert_eq!(lines[0], "[40 earlier lines left out]");
        assert_eq!(lines[1], "line 40");
        assert_eq!(*lines.last().unwrap(), "line 99");
        let long = "x".repeat(5000);
        let tail = super::tail(long.as_bytes());
        assert!(tail.ends_with(" [...]") && tail.len() < 400, "{tail}");
        assert!(super::tail(b"").is_empty());
    }
}

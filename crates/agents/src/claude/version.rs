//! Reading a CLI's `--version` output: `2.1.197 (Claude Code)` for Claude Code, `0.15.10` for
//! Qwen Code. The version is the first word, on the first line that starts with a digit (a
//! warning printed before it is skipped).

/// The version a `--version` run printed.
pub fn parse_version(stdout: &str) -> Option<String> {
    stdout
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .find(|word| word.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_first_word_that_starts_with_a_digit() {
        assert_eq!(
            parse_version("2.1.197 (Claude Code)\n").as_deref(),
            Some("2.1.197")
        );
        assert_eq!(parse_version("0.15.10\n").as_deref(), Some("0.15.10"));
        assert_eq!(
            parse_version("Warning: something\n\n0.15.10\n").as_deref(),
            Some("0.15.10")
        );
        assert_eq!(parse_version("error: no\n"), None);
        assert_eq!(parse_version(""), None);
    }
}

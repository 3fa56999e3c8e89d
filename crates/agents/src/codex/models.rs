//! Reading `codex --version` (`codex-cli 0.171.0`) and `gemini --version` (the bare version,
//! `0.61.0`): the last word of the first line. Neither CLI has a command that lists models, so
//! the model is not checked before a round.

/// The version `codex --version` or `gemini --version` printed.
pub fn parse_version(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).find(|l| !l.is_empty())?;
    let version = line.rsplit(' ').next()?;
    version
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
        .then(|| version.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_last_word() {
        assert_eq!(
            parse_version("codex-cli 0.171.0\n").as_deref(),
            Some("0.171.0")
        );
        assert_eq!(parse_version("0.171.0").as_deref(), Some("0.171.0"));
        assert_eq!(parse_version("error: no such thing\n"), None);
        assert_eq!(parse_version(""), None);
    }

    #[test]
    fn gemini_prints_the_version_alone() {
        assert_eq!(parse_version("0.61.0\n").as_deref(), Some("0.61.0"));
        assert_eq!(parse_version("\nerror\n"), None);
    }
}

//! Reading `codex --version`: `codex-cli 0.171.0`. Codex has no command that lists models, so
//! the model is not checked before a round.

/// The version `codex --version` printed.
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
}

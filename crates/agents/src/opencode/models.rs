//! Reading `opencode models`: one `provider/model` per line (measured with 1.18.33; it takes
//! about 5 s, so the engine caches the list). Anything else on a line is not a model.

/// The model ids in `opencode models` output.
pub fn parse_models(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|line| {
            let mut parts = line.splitn(2, '/');
            let provider = parts.next().unwrap_or_default();
            let model = parts.next().unwrap_or_default();
            !provider.is_empty() && !model.is_empty() && !line.contains(char::is_whitespace)
        })
        .map(str::to_owned)
        .collect()
}

/// The version `opencode --version` printed.
pub fn parse_version(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).find(|l| !l.is_empty())?;
    line.chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
        .then(|| line.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lines_are_kept_and_noise_is_not() {
        let out = "opencode/big-pickle\nopenrouter/deepseek/deepseek-v4.1-flash\nmock/scripted\n\nINFO something happened\n";
        assert_eq!(
            parse_models(out),
            [
                "opencode/big-pickle",
                "openrouter/deepseek/deepseek-v4.1-flash",
                "mock/scripted"
            ]
        );
        assert_eq!(parse_version("1.18.33\n").as_deref(), Some("1.18.33"));
        assert_eq!(parse_version("error\n"), None);
    }
}

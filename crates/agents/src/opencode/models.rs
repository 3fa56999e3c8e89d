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

/// The models a configuration defines: `P/M` for every `provider.P.models.M`, unless the
/// configuration turns provider `P` off (`disabled_providers`, or an `enabled_providers` that
/// leaves it out), in which case OpenCode does not list it.
pub fn configured_models(config: &toml::Table) -> Vec<String> {
    let names = |key: &str| -> Option<Vec<&str>> {
        config
            .get(key)?
            .as_array()
            .map(|list| list.iter().filter_map(toml::Value::as_str).collect())
    };
    let disabled = names("disabled_providers").unwrap_or_default();
    let enabled = names("enabled_providers");
    let Some(providers) = config.get("provider").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    let mut models = Vec::new();
    for (provider, settings) in providers {
        if disabled.contains(&provider.as_str())
            || enabled
                .as_ref()
                .is_some_and(|on| !on.contains(&provider.as_str()))
        {
            continue;
        }
        if let Some(defined) = settings.get("models").and_then(toml::Value::as_table) {
            models.extend(defined.keys().map(|model| format!("{provider}/{model}")));
        }
    }
    models
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
    fn the_models_a_configuration_defines_are_listed_unless_their_provider_is_off() {
        let config: toml::Table = toml::from_str(
            r#"
            disabled_providers = ["off"]
            [provider.mock.models.scripted]
            limit = { context = 1 }
            [provider.mock.models."a/b"]
            [provider.off.models.x]
            [provider.bare]
            "#,
        )
        .unwrap();
        assert_eq!(configured_models(&config), ["mock/a/b", "mock/scripted"]);
        let only: toml::Table =
            toml::from_str("enabled_providers = [\"other\"]\n[provider.mock.models.m]\n").unwrap();
        assert!(configured_models(&only).is_empty());
        assert!(configured_models(&toml::Table::new()).is_empty());
    }

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

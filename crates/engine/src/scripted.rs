//! The `ganger.toml` that points an agent at ganger's scripted model server, from its
//! adapter's [`ganger_agents::Adapter::scripted_endpoint`]: used by `ganger agents doctor` and
//! the end-to-end tests, so both check the same set-up a user would write.

use ganger_agents::Adapter;
use std::path::Path;

/// `ganger.toml` text: `[defaults]` with the agent, its scripted model and `defaults` (more
/// `key = value` lines), the `[agents.NAME]` table (program, environment with `extra_env`
/// added, configuration), then `extra` appended.
pub fn scripted_toml(
    adapter: &dyn Adapter,
    program: &Path,
    base_url: &str,
    extra_env: &[(String, String)],
    defaults: &str,
    extra: &str,
) -> String {
    let endpoint = adapter.scripted_endpoint(base_url);
    let mut agent = toml::Table::new();
    agent.insert(
        "command".into(),
        program.to_string_lossy().into_owned().into(),
    );
    let env: toml::Table = endpoint
        .env
        .iter()
        .chain(extra_env)
        .map(|(key, value)| (key.clone(), toml::Value::from(value.clone())))
        .collect();
    agent.insert("env".into(), env.into());
    if let Some(config) = endpoint
        .config
        .as_ref()
        .and_then(|config| toml::Value::try_from(config).ok())
    {
        agent.insert("config".into(), config);
    }
    let mut agents = toml::Table::new();
    agents.insert(adapter.name().into(), agent.into());
    let mut root = toml::Table::new();
    root.insert("agents".into(), agents.into());
    let quoted = |text: &str| toml::Value::from(text).to_string();
    format!(
        "[defaults]\nagent = {}\nmodel = {}\n{defaults}\n\n{}\n{extra}\n",
        quoted(adapter.name()),
        quoted(&endpoint.model),
        toml::to_string(&root).unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opencode_set_up_reads_back_as_a_valid_configuration() {
        let adapter = ganger_agents::adapter("opencode").unwrap();
        let text = scripted_toml(
            adapter,
            Path::new("/opt/opencode"),
            "http://127.0.0.1:9",
            &[("HOME".into(), "/h".into())],
            "stall = \"5s\"",
            "",
        );
        let config = crate::config::Config::from_text(&text).unwrap();
        assert_eq!(config.defaults.agent, "opencode");
        assert_eq!(config.defaults.model.as_deref(), Some("mock/scripted"));
        let agent = config.agent("opencode");
        assert_eq!(agent.env["HOME"], "/h");
        assert_eq!(agent.env["OPENCODE_DISABLE_MODELS_FETCH"], "1");
        let options = &agent.config.unwrap()["provider"]["mock"]["options"];
        assert_eq!(options["baseURL"].as_str(), Some("http://127.0.0.1:9/v1"));
    }
}

//! The `ganger.toml` that points an agent at ganger's scripted model server, from its
//! adapter's [`ganger_agents::Adapter::scripted_endpoint`]: used by `ganger agents doctor` and
//! the end-to-end tests, so both check the same set-up a user would write.

use crate::base::error::{EngineError, Result};
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

/// Makes a throwaway repository at `repo` for a scripted run (`ganger demo`, `ganger agents
/// doctor`): `main` with one commit of `files` (name, contents), committed as `who`.
pub fn scratch_repository(repo: &Path, who: &str, files: &[(&str, &str)]) -> Result<()> {
    std::fs::create_dir_all(repo).map_err(|e| EngineError::io("create", repo, e))?;
    let git = ganger_git::Git::new(repo);
    git.run(["init", "-q", "-b", "main"])?;
    let email = format!("{}@example.invalid", who.replace(' ', "-"));
    for (key, value) in [
        ("user.name", who),
        ("user.email", email.as_str()),
        ("commit.gpgsign", "false"),
    ] {
        git.run(["config", key, value])?;
    }
    for (name, contents) in files {
        let path = repo.join(name);
        std::fs::write(&path, contents).map_err(|e| EngineError::io("write", &path, e))?;
    }
    git.run(["add", "-A"])?;
    git.run(["commit", "-q", "-m", &format!("{who} repository")])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_s_set_up_reads_back_as_a_valid_configuration() {
        for &adapter in ganger_agents::adapters() {
            let name = adapter.name();
            let text = scripted_toml(
                adapter,
                Path::new("/opt/agent"),
                "http://127.0.0.1:9",
                &[("HOME".into(), "/h".into())],
                "stall = \"5s\"",
                "",
            );
            let config = crate::base::config::Config::from_text(&text).unwrap();
            let endpoint = adapter.scripted_endpoint("http://127.0.0.1:9");
            assert_eq!(config.defaults.agent, name);
            assert_eq!(config.defaults.model, Some(endpoint.model));
            let agent = config.agent(name);
            assert_eq!(agent.command.as_deref(), Some(Path::new("/opt/agent")));
            assert_eq!(agent.env["HOME"], "/h", "{name}");
            for (key, value) in &endpoint.env {
                assert_eq!(&agent.env[key], value, "{name}");
            }
            let read_back = agent
                .config
                .map(|table| serde_json::to_value(table).unwrap());
            assert_eq!(read_back, endpoint.config, "{name}");
        }
    }
}

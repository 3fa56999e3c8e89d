//! Asking an agent's CLI a short question outside a round (its models, its saved sessions)
//! with the environment and configuration its rounds get, so that it sees the same providers
//! and the same session store, in a given directory and within a time limit.

use crate::base::error::{EngineError, Result};
use crate::env::agent_env;
use crate::env::workspace::Workspace;
use ganger_agents::{Adapter, CommandPlan};
use ganger_sandbox::{AgentCommand, run_captured};
use std::path::Path;
use std::time::Duration;

/// Runs `program args` in `dir` and returns what it printed on stdout; an error names the
/// command and what it said when it fails or runs out of time.
pub(crate) fn ask(
    ws: &Workspace,
    adapter: &dyn Adapter,
    program: &Path,
    args: &[&str],
    dir: &Path,
    limit: Duration,
) -> Result<String> {
    let plan = CommandPlan::new(
        Vec::new(),
        vec![("PWD".into(), dir.to_string_lossy().into_owned())],
        None,
    );
    let mut env = agent_env::agent_environment(adapter, &ws.config, &plan, &[]);
    if let (Some(name), Some(overlay)) = (
        adapter.inherited_config_env(),
        agent_env::config_overlay(adapter, &ws.config),
    ) {
        // The same configuration the rounds get, so that configured providers are listed.
        let inherited = agent_env::inherited_config(adapter, &ws.config);
        let request_env = agent_env::request_env(adapter, &ws.config, &[]);
        let agent_dir = ws.state.agent_dir(adapter.name());
        let request = ganger_agents::RoundRequest {
            resume_at: None,
            prompt: "",
            session: None,
            new_session_id: "",
            title: "",
            model: None,
            worktree: dir,
            config: Some(&overlay),
            inherited_config: inherited.as_deref(),
            permission: ganger_agents::Permission::Write,
            sandboxed: false,
            env: &request_env,
            agent_dir: &agent_dir,
        };
        if let Some((_, value)) = adapter
            .plan(&request)?
            .env
            .into_iter()
            .find(|(k, _)| k == name)
        {
            env.retain(|(k, _)| k != name);
            env.push((name.into(), value.into()));
        }
    }
    let captured = run_captured(
        &AgentCommand {
            program: program.to_path_buf(),
            args: args.iter().map(Into::into).collect(),
            env,
            cwd: dir.to_path_buf(),
            stdin: None,
            token: format!("ask-{}", crate::base::tokens::new_token()),
            use_cgroup: false,
        },
        limit,
    )?;
    match captured.exit {
        Some(exit) if exit.code == Some(0) => {}
        _ => {
            return Err(EngineError::invalid(format!(
                "`{} {}` failed: {}",
                adapter.program(),
                args.join(" "),
                String::from_utf8_lossy(&captured.stderr).trim()
            )));
        }
    }
    Ok(String::from_utf8_lossy(&captured.stdout).into_owned())
}

//! A race's judge (the read-only role `judge`): its agent and model (`[roles.judge]`, each key
//! it leaves out from `[roles.code]`, then `[defaults]`), and the admission check that its
//! agent is known and installed and its model's name sound, shared by `ganger race` and a
//! fleet file's race so that both refuse a judge that could not run before anything is made.

use crate::base::error::{EngineError, Result};
use crate::env::agent_env;
use crate::env::workspace::Workspace;
use crate::task::admission::{check_model_name, known_adapter};
use std::path::PathBuf;

/// The judge's agent, model and its own instructions' file (relative to the repository).
pub(crate) fn judge_agent(ws: &Workspace) -> (String, Option<String>, Option<PathBuf>) {
    let own = ws.config.roles.get("judge").cloned().unwrap_or_default();
    let code = ws.config.roles.get("code").cloned().unwrap_or_default();
    let agent = own
        .agent
        .or(code.agent)
        .unwrap_or_else(|| ws.config.defaults.agent.clone());
    let model = own
        .model
        .or(code.model)
        .or(ws.config.defaults.model.clone());
    (agent, model, own.prompt)
}

/// Refuses (exit 2) a judge whose agent is not known or not installed, or whose model's name
/// is not sound; `whose` names the race in the message (`the race's judge`, `task r's judge`).
pub(crate) fn check_judge(ws: &Workspace, whose: &str) -> Result<()> {
    let (agent, model, _) = judge_agent(ws);
    let refused = |e: EngineError| EngineError::invalid(format!("{whose}: {}", e.message));
    let adapter = known_adapter(ws, &agent).map_err(refused)?;
    check_model_name(adapter, model.as_deref()).map_err(refused)?;
    agent_env::resolve_program(adapter, &ws.config).map_err(refused)?;
    Ok(())
}

//! A role as a round needs it: `[roles.NAME]` of `ganger.toml` over the built-in defaults
//! (read-only but for the executor; the task's agent and model), with its instructions from
//! the repository's prompt file or, without one, from the files built into ganger.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_agents::Permission;
use ganger_store::Task;

/// The roles the pipeline drives itself.
pub const PLANNER: &str = "planner";
pub const CRITIC: &str = "critic";
pub const EXECUTOR: &str = "executor";

/// A role, resolved.
#[derive(Debug, Clone)]
pub struct Role {
    pub name: String,
    pub agent: String,
    /// `None`: the agent's default.
    pub model: Option<String>,
    pub effort: Option<String>,
    pub permission: Permission,
    pub instructions: String,
    /// Where the instructions come from: the prompt file, or `built-in`.
    pub source: String,
}

impl Role {
    /// The effort this role asks for, as `effort.rs` reads it.
    pub fn effort(&self) -> super::effort::RoleEffort<'_> {
        super::effort::RoleEffort {
            role: &self.name,
            agent: &self.agent,
            effort: self.effort.as_deref(),
        }
    }
}

/// The instructions built into ganger for a role; reviewers a user adds get the generic
/// reviewer's, told their focus.
pub fn built_in_instructions(name: &str) -> String {
    let text = match name {
        PLANNER => include_str!("roles/planner.md"),
        CRITIC => include_str!("roles/critic.md"),
        EXECUTOR => include_str!("roles/executor.md"),
        "tests" => include_str!("roles/tests.md"),
        "code" => include_str!("roles/code.md"),
        "docs" => include_str!("roles/docs.md"),
        "security" => include_str!("roles/security.md"),
        other => {
            return format!(
                "{}\nYour focus: {other}.\n",
                include_str!("roles/reviewer.md").trim_end()
            );
        }
    };
    text.to_owned()
}

/// The role `name` for a round of `task`'s pipeline.
pub fn resolve(ws: &Workspace, task: &Task, name: &str) -> Result<Role> {
    resolve_for(ws, &task.agent, task.model.as_deref(), name)
}

/// Every role the pipeline will use, checked before anything is made: its prompt file, its
/// agent's program and its model (exit 3 when the model is not available).
pub fn preflight(
    ws: &Workspace,
    agent: &str,
    model: Option<&str>,
    notices: &mut dyn crate::base::notice::Notices,
) -> Result<()> {
    let mut names = vec![PLANNER.to_owned(), CRITIC.to_owned(), EXECUTOR.to_owned()];
    names.extend(ws.config.pipeline.reviewers.iter().cloned());
    // Everything that needs no model list first, so that a mistake is said before any model
    // is checked; then each (agent, model) once.
    let mut checks = Vec::new();
    for name in names {
        let role = resolve_for(ws, agent, model, &name)?;
        super::effort::check(role.effort())?;
        let adapter = crate::task::admission::known_adapter(ws, &role.agent)?;
        let program = crate::env::agent_env::resolve_program(adapter, &ws.config)?;
        checks.push((adapter, program, role.model));
    }
    let mut checked: Vec<(&str, Option<String>)> = Vec::new();
    for (adapter, program, model) in checks {
        let key = (adapter.name(), model.clone());
        if !checked.contains(&key) {
            crate::task::admission::require_model(
                ws,
                adapter,
                &program,
                model.as_deref(),
                notices,
            )?;
            checked.push(key);
        }
    }
    Ok(())
}

fn resolve_for(ws: &Workspace, agent: &str, model: Option<&str>, name: &str) -> Result<Role> {
    let config = ws.config.roles.get(name).cloned().unwrap_or_default();
    let permission = match &config.permission {
        Some(setting) => setting.value().map_err(EngineError::invalid)?,
        None if name == EXECUTOR => Permission::Write,
        None => Permission::ReadOnly,
    };
    let (instructions, source) = match &config.prompt {
        Some(path) => {
            let full = ws.repo.main.join(path);
            let text = std::fs::read_to_string(&full).map_err(|e| {
                EngineError::invalid(format!(
                    "roles.{name}.prompt: cannot read {}: {e}",
                    full.display()
                ))
            })?;
            (text, path.display().to_string())
        }
        None => (built_in_instructions(name), "built-in".to_owned()),
    };
    Ok(Role {
        name: name.to_owned(),
        agent: config.agent.unwrap_or_else(|| agent.to_owned()),
        model: config.model.or_else(|| model.map(str::to_owned)),
        effort: config.effort,
        permission,
        instructions,
        source,
    })
}

/// The name of a role's task: `SLUG.ROLE`.
pub fn role_slug(parent: &str, role: &str) -> String {
    format!("{parent}.{role}")
}

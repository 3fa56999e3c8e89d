//! Who may do what to a task. The commander that starts a task owns it; only the owner may
//! cancel, merge, rewind, hand it on (`assign`, `transfer`, `release`) or set what it lets in
//! (`policy`, `allow`); the owner and the commanders it allows may send it rounds, as its
//! inbound policy says (`accept`, `hold` or `refuse`). Every ownership change bumps the
//! task's generation, and a round is started only under the generation its sender saw (the
//! store checks it in the transaction that starts the round), so work sent before a transfer
//! never reaches the new owner's worker.

use crate::base::commander::commander;
use crate::base::error::{EngineError, Result};
use crate::base::notice::Notices;
use crate::env::workspace::Workspace;
use crate::task::rules::{Inbound, require_owner};
use ganger_store::{OwnerChange, Task};
use serde::Serialize;

/// Who owns a task and what it lets in (`ganger.ownership/1`, docs/json.md).
#[derive(Debug, Clone, Serialize)]
pub struct OwnershipReport {
    pub schema: &'static str,
    pub task: String,
    /// Empty when nobody owns it.
    pub owner: String,
    pub generation: i64,
    pub inbound: String,
    pub allowed: Vec<String>,
    /// What changed: `assigned`, `transferred`, `released`, `policy`, `allowed`.
    pub change: &'static str,
}

impl OwnershipReport {
    fn of(task: &Task, change: &'static str) -> Self {
        OwnershipReport {
            schema: "ganger.ownership/1",
            task: task.slug.clone(),
            owner: task.owner.clone(),
            generation: task.generation,
            inbound: task.inbound.clone(),
            allowed: task.allowed.clone(),
            change,
        }
    }
}

/// What an ownership command was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnershipAction {
    /// Take a task nobody owns (or, as its owner, give it to `to`).
    Assign { to: Option<String> },
    /// Give a task one owns to another commander.
    Transfer { to: String },
    /// Let a task go: nobody owns it until someone assigns it.
    Release,
    /// Set the inbound policy.
    Policy(Inbound),
    /// Let commanders send rounds besides the owner (`remove`: stop letting them).
    Allow { names: Vec<String>, remove: bool },
}

/// Runs an ownership command on `slug` as `as_name`.
pub fn change_ownership(
    ws: &Workspace,
    slug: &str,
    action: &OwnershipAction,
    as_name: Option<&str>,
    notices: &mut dyn Notices,
) -> Result<OwnershipReport> {
    let me = commander(as_name);
    if let OwnershipAction::Assign { to: Some(to) } | OwnershipAction::Transfer { to } = action {
        check_name(to)?;
    }
    if let OwnershipAction::Allow { names, .. } = action {
        if names.is_empty() {
            return Err(EngineError::invalid("name at least one commander to allow"));
        }
        names.iter().try_for_each(|n| check_name(n))?;
    }
    let (mut store, task) = crate::task::lookup::settled_task(ws, slug, notices)?;
    let changed = match action {
        OwnershipAction::Assign { to } => {
            let to = to.clone().unwrap_or_else(|| me.clone());
            if !task.owner.is_empty() {
                require_owner(&task, &me, "assign")?;
            }
            if task.owner == to {
                return Err(EngineError::invalid(format!(
                    "task {slug} is owned by {to} already"
                )));
            }
            store.change_owner(
                task.id,
                task.generation,
                OwnerChange::Assign { to: &to },
                &me,
            )?
        }
        OwnershipAction::Transfer { to } => {
            require_owner(&task, &me, "transfer")?;
            if &task.owner == to {
                return Err(EngineError::invalid(format!(
                    "task {slug} is owned by {to} already"
                )));
            }
            store.change_owner(task.id, task.generation, OwnerChange::Transfer { to }, &me)?
        }
        OwnershipAction::Release => {
            require_owner(&task, &me, "release")?;
            store.change_owner(task.id, task.generation, OwnerChange::Release, &me)?
        }
        OwnershipAction::Policy(inbound) => {
            require_owner(&task, &me, "set the policy of")?;
            store.set_inbound(task.id, inbound.as_str(), &me)?;
            reload(&*store, slug)?
        }
        OwnershipAction::Allow { names, remove } => {
            require_owner(&task, &me, "change who may send rounds to")?;
            let mut allowed = task.allowed.clone();
            for name in names {
                if *remove {
                    allowed.retain(|a| a != name);
                } else if !allowed.contains(name) && *name != task.owner {
                    allowed.push(name.clone());
                }
            }
            store.set_allowed(task.id, &allowed, &me)?;
            reload(&*store, slug)?
        }
    };
    let change = match action {
        OwnershipAction::Assign { .. } => "assigned",
        OwnershipAction::Transfer { .. } => "transferred",
        OwnershipAction::Release => "released",
        OwnershipAction::Policy(_) => "policy",
        OwnershipAction::Allow { .. } => "allowed",
    };
    Ok(OwnershipReport::of(&changed, change))
}

fn reload(store: &dyn ganger_store::Store, slug: &str) -> Result<Task> {
    crate::task::lookup::find_task(store, slug)
}

/// A commander's name: not empty, one line, not absurdly long.
fn check_name(name: &str) -> Result<()> {
    if name.trim().is_empty() || name.chars().any(char::is_control) || name.len() > 200 {
        return Err(EngineError::invalid(format!(
            "{name:?} is not a commander's name (one line, 1 to 200 characters)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_back_and_unknown_ones_are_named() {
        for p in [Inbound::Accept, Inbound::Hold, Inbound::Refuse] {
            assert_eq!(p.as_str().parse::<Inbound>(), Ok(p));
        }
        let error = "maybe".parse::<Inbound>().unwrap_err();
        assert!(error.contains("\"maybe\"") && error.contains("accept, hold, refuse"));
    }

    #[test]
    fn names_are_one_line() {
        assert!(check_name("alice").is_ok());
        assert!(check_name(" ").is_err());
        assert!(check_name("a\nb").is_err());
    }
}

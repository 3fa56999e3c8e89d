//! The commits `ganger merge` writes: the task's final state on its branch (the worker never
//! commits), and the new tip of the base branch for each mode (a merge commit, one squashed
//! commit, or the task's commits replayed onto the base), all computed in memory so that a
//! conflict is known before any branch or file changes.

use crate::base::error::Result;
use ganger_git::{Oid, Repo};
use ganger_store::{Round, Task};
use serde::Serialize;

/// How the task's branch goes into its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MergeMode {
    /// A merge commit with the base's tip and the task's branch as parents.
    #[default]
    Merge,
    /// One commit on the base with the task's whole change.
    Squash,
    /// The task's commits replayed onto the base, which then fast-forwards to them.
    Rebase,
}

impl MergeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            MergeMode::Merge => "merge",
            MergeMode::Squash => "squash",
            MergeMode::Rebase => "rebase",
        }
    }
}

impl std::str::FromStr for MergeMode {
    type Err = String;

    /// A mode as front ends take it by name (`merge`, `squash`, `rebase`).
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        match text {
            "merge" => Ok(MergeMode::Merge),
            "squash" => Ok(MergeMode::Squash),
            "rebase" => Ok(MergeMode::Rebase),
            other => Err(format!(
                "merge mode {other:?}: expected merge, squash or rebase"
            )),
        }
    }
}

/// The rounds a message names: `1-3`, or `1, 2, 5` when some were rewound.
pub(crate) fn round_list(rounds: &[&Round]) -> String {
    let numbers: Vec<u32> = rounds.iter().map(|r| r.number).collect();
    match numbers.as_slice() {
        [] => "none".into(),
        [one] => one.to_string(),
        [first, .., last] if last - first + 1 == numbers.len() as u32 => {
            format!("{first}-{last}")
        }
        _ => numbers
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// `round 1`, or `rounds 1-3`.
pub(crate) fn rounds_phrase(rounds: &[&Round]) -> String {
    let plural = if rounds.len() == 1 { "round" } else { "rounds" };
    format!("{plural} {}", round_list(rounds))
}

/// The message of the commit of the task's final state (and of a squashed merge): the task,
/// its rounds and the first line of each round's prompt.
pub(crate) fn task_message(name: &str, task: &Task, kept: &[&Round], prompts: &[String]) -> String {
    let whose = if name == task.slug {
        String::new()
    } else {
        format!(", by {}", task.slug)
    };
    let mut message = format!(
        "{name}: the work of task {name} ({}{whose})\n\nCommitted by ganger from the worktree of \
         task {name} (agent {}) as its rounds left it.\n\n",
        rounds_phrase(kept),
        task.agent
    );
    for (round, prompt) in kept.iter().zip(prompts) {
        let first = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let first: String = first.trim().chars().take(72).collect();
        message.push_str(&format!(
            "round {} ({}, {}): {first}\n",
            round.number,
            round.kind.as_str(),
            round.status.as_str()
        ));
    }
    message
}

/// The new tip of the base, the files that conflict, or nothing to merge (the base already
/// has the task's whole change).
pub(crate) enum Planned {
    Commit(Oid),
    Conflict(Vec<String>),
    Nothing,
}

/// Computes the base's new tip for `mode` from the base's tip and the task's tip.
pub(crate) fn plan(
    repo: &Repo,
    mode: MergeMode,
    base_tip: &str,
    task_tip: &str,
    merge_message: &str,
    squash_message: &str,
) -> Result<Planned> {
    match mode {
        MergeMode::Merge | MergeMode::Squash => {
            let merged = repo.merge_trees(base_tip, task_tip, None)?;
            if !merged.conflicts.is_empty() {
                return Ok(Planned::Conflict(merged.conflicts));
            }
            if repo.tree_of(base_tip).as_deref() == Some(merged.tree.as_str()) {
                return Ok(Planned::Nothing);
            }
            let commit = if mode == MergeMode::Merge {
                repo.commit_tree(&merged.tree, &[base_tip, task_tip], merge_message)?
            } else {
                repo.commit_tree(&merged.tree, &[base_tip], squash_message)?
            };
            Ok(Planned::Commit(commit))
        }
        MergeMode::Rebase => {
            if repo.is_ancestor(base_tip, task_tip)? {
                return Ok(Planned::Commit(task_tip.to_owned()));
            }
            let mut onto = base_tip.to_owned();
            for commit in repo.commits_between(base_tip, task_tip)? {
                match repo.replay(&commit, &onto)? {
                    Ok(replayed) => onto = replayed,
                    Err(conflict) => return Ok(Planned::Conflict(conflict.conflicts)),
                }
            }
            Ok(Planned::Commit(onto))
        }
    }
}

//! The pipeline's stage and the plan's files: what `plan`, `approve` and `reject` read and
//! advance, kept in the store (`pipelines`) and under `.ganger/plans/`.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use ganger_store::PipelineRecord;
use std::path::PathBuf;

/// Where a pipeline is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The planner is writing a version of the plan.
    Planning,
    /// The critic is reviewing it.
    Critiquing,
    /// Waiting for `ganger approve` or `ganger reject`.
    AwaitingApproval,
    /// The executor is working through the steps.
    Executing,
    /// The reviewers are reading the work, or the executor is fixing what they found.
    Reviewing,
    /// Every step is done and every reviewer passed.
    Done,
    /// Stopped: a round failed beyond its bounds; the reason says which.
    Failed,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Planning => "planning",
            Stage::Critiquing => "critiquing",
            Stage::AwaitingApproval => "awaiting-approval",
            Stage::Executing => "executing",
            Stage::Reviewing => "reviewing",
            Stage::Done => "done",
            Stage::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Result<Stage> {
        Ok(match text {
            "planning" => Stage::Planning,
            "critiquing" => Stage::Critiquing,
            "awaiting-approval" => Stage::AwaitingApproval,
            "executing" => Stage::Executing,
            "reviewing" => Stage::Reviewing,
            "done" => Stage::Done,
            "failed" => Stage::Failed,
            other => {
                return Err(EngineError::invalid(format!(
                    "the store holds an unknown pipeline stage {other:?}"
                )));
            }
        })
    }
}

/// Sets the record's stage (and reason: only a failed stage has one).
pub fn set_stage(record: &mut PipelineRecord, stage: Stage, reason: Option<String>) {
    record.stage = stage.as_str().to_owned();
    record.reason = reason;
}

/// The record's stage.
pub fn stage(record: &PipelineRecord) -> Result<Stage> {
    Stage::parse(&record.stage)
}

/// The stage a command may act on: a stage at work (planning, executing...) whose rounds
/// have all ended, because the command running it was stopped (its rounds are settled here
/// first), counts as failed.
pub fn settled_stage(
    ws: &Workspace,
    store: &mut dyn ganger_store::Backend,
    record: &PipelineRecord,
    notices: &mut dyn crate::base::notice::Notices,
) -> Result<Stage> {
    let at = stage(record)?;
    if matches!(at, Stage::AwaitingApproval | Stage::Done | Stage::Failed) {
        return Ok(at);
    }
    let mut running = false;
    for role in store.role_tasks(record.task_id)? {
        crate::round::reaper::settle_task(ws, store, &role, notices)?;
        let now = ganger_store::Store::task(store, &role.slug)?;
        running |= now.is_some_and(|t| t.last_status == Some(ganger_events::RoundStatus::Running));
    }
    Ok(if running { at } else { Stage::Failed })
}

/// Holds the pipeline of `slug` for this command while it lives: one `plan`, `approve` or
/// `reject` at a time per task (an exclusive `flock`, dropped by the kernel however the
/// command ends).
pub fn lock(ws: &Workspace, slug: &str) -> Result<std::fs::File> {
    let dir = ws.state.run_dir();
    std::fs::create_dir_all(&dir).map_err(|e| EngineError::io("create", &dir, e))?;
    let path = dir.join(format!("pipeline-{slug}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| EngineError::io("open", &path, e))?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(file),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(EngineError::invalid(format!(
            "another ganger plan, approve or reject is running the pipeline of {slug}"
        ))
        .hint(format!("`ganger status {slug}` shows where it is"))),
        Err(e) => Err(EngineError::io("lock", &path, e.into())),
    }
}

/// The plan's files: the current one and every version.
pub struct PlanFiles {
    dir: PathBuf,
    slug: String,
}

impl PlanFiles {
    pub fn of(ws: &Workspace, slug: &str) -> PlanFiles {
        PlanFiles {
            dir: ws.state.root().join("plans"),
            slug: slug.to_owned(),
        }
    }

    /// `.ganger/plans/SLUG.md`: the current version, critique included.
    pub fn current(&self) -> PathBuf {
        self.dir.join(format!("{}.md", self.slug))
    }

    /// `.ganger/plans/SLUG.vN.md`: version N, kept.
    pub fn version(&self, number: u32) -> PathBuf {
        self.dir.join(format!("{}.v{number}.md", self.slug))
    }

    /// Writes version `number` (and makes it the current one).
    pub fn write(&self, number: u32, text: &str) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| EngineError::io("create", &self.dir, e))?;
        for path in [self.version(number), self.current()] {
            std::fs::write(&path, text).map_err(|e| EngineError::io("write", &path, e))?;
        }
        Ok(())
    }

    /// Appends to version `number` and to the current file.
    pub fn append(&self, number: u32, text: &str) -> Result<()> {
        use std::io::Write;
        for path in [self.version(number), self.current()] {
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(|e| EngineError::io("append to", &path, e))?;
        }
        Ok(())
    }

    /// The current version's text.
    pub fn read(&self) -> Result<String> {
        let path = self.current();
        std::fs::read_to_string(&path).map_err(|e| EngineError::io("read", &path, e))
    }

    /// The planner's text of version `number`, without ganger's header line and the
    /// critique ganger appended.
    pub fn plan_only(&self, number: u32) -> Result<String> {
        let path = self.version(number);
        let text = std::fs::read_to_string(&path).map_err(|e| EngineError::io("read", &path, e))?;
        let text = match text.find(CRITIQUE_MARK) {
            Some(at) => &text[..at],
            None => &text,
        };
        let text = match text.strip_prefix(HEADER_START) {
            Some(rest) => rest.split_once('\n').map_or("", |(_, body)| body),
            None => text,
        };
        Ok(text.trim().to_owned() + "\n")
    }

    /// The critic's findings on the current version, as appended; empty when there are none.
    pub fn critique(&self) -> String {
        let Ok(text) = self.read() else {
            return String::new();
        };
        let Some((_, after)) = text.split_once(CRITIQUE_MARK) else {
            return String::new();
        };
        // The rest of the heading line names the critic's round.
        after
            .split_once('\n')
            .map_or("", |(_, body)| body)
            .trim()
            .to_owned()
    }
}

/// How the first line of a plan file, ganger's note of where it came from, starts.
pub const HEADER_START: &str = "<!-- ganger:";

/// The heading ganger puts before the critic's findings in a plan file.
pub const CRITIQUE_MARK: &str = "\n\n---\n\n## Critique";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_file_keeps_versions_and_gives_back_the_plan_and_the_critique() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let files = PlanFiles {
            dir: dir.path().join("plans"),
            slug: "t".into(),
        };
        let ok = |r: Result<()>| r.unwrap_or_else(|e| panic!("{}", e.message));
        ok(files.write(1, &format!("{HEADER_START} v1 -->\n\n1. One\n")));
        ok(files.append(
            1,
            &format!("{CRITIQUE_MARK} (the critic, t.critic round 1)\n\nToo vague.\n"),
        ));
        ok(files.write(2, &format!("{HEADER_START} v2 -->\n\n1. One, exactly\n")));
        assert_eq!(files.plan_only(1).ok().as_deref(), Some("1. One\n"));
        assert_eq!(
            files.plan_only(2).ok().as_deref(),
            Some("1. One, exactly\n")
        );
        // The current file is version 2, which has no critique yet.
        assert_eq!(files.critique(), "");
        ok(files.append(
            2,
            &format!("{CRITIQUE_MARK} (the critic, t.critic round 2)\n\nSound.\n"),
        ));
        assert_eq!(files.critique(), "Sound.");
        let v1 = std::fs::read_to_string(files.version(1)).unwrap_or_default();
        assert!(v1.ends_with("Too vague.\n"), "{v1}");
    }
}

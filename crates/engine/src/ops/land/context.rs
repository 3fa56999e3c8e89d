//! What a lander works with on one base (its store, the repository, the scratch worktree,
//! the checks), and how it tells of each step: a journal entry, the batch's progress in the
//! store (what `land status` shows), and a notice for the caller.

use crate::base::config::{CheckConfig, LandMode};
use crate::base::error::Result;
use crate::base::notice::{Notice, Notices};
use crate::env::workspace::Workspace;
use crate::ops::land::checks::Scratch;
use crate::ops::land::place::CheckPlace;
use crate::ops::land::report::BatchReport;
use ganger_git::Repo;
use ganger_store::{Backend, Claim};
use serde_json::json;

/// What a lander works with on one base.
pub(crate) struct Lander<'a> {
    pub ws: &'a Workspace,
    pub store: Box<dyn Backend>,
    pub main: Repo,
    pub base: String,
    pub commander: String,
    pub scratch: Scratch,
    /// The sandbox of the batch under test, where its checks run.
    pub place: Option<CheckPlace>,
    pub checks: Vec<CheckConfig>,
    /// What a green batch lands as (`[land] mode`).
    pub mode: LandMode,
    /// The lander's claim on the base.
    pub claim: &'a Claim,
}

impl Lander<'_> {
    /// Whether the lander lost its claim on the base (a lease run out while it was paused).
    pub(crate) fn lost(&self) -> bool {
        self.claim.lost()
    }

    /// Journals a step of the batch and tells the caller.
    pub(crate) fn step(
        &mut self,
        report: &BatchReport,
        step: &str,
        line: String,
        notices: &mut dyn Notices,
    ) -> Result<()> {
        let mut detail = json!({ "batch": report.batch, "base": report.base, "step": step });
        if let Some(last) = report.probes.last().filter(|_| step == "check-run") {
            detail["probe"] = json!(last);
        }
        // The batch's progress first: a reader woken by the journal's entry finds the batch
        // as the entry says, never in its earlier state.
        self.store.land_progress(report.batch, &json!(report))?;
        self.store.land_step(&self.commander, detail)?;
        notices.notice(Notice::Land {
            base: self.base.clone(),
            message: line,
        });
        Ok(())
    }
}

/// A commit as lines show it.
pub(crate) fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// `1 check run`, `3 check runs`.
pub(crate) fn runs_phrase(runs: u32) -> String {
    format!("{runs} check run{}", if runs == 1 { "" } else { "s" })
}

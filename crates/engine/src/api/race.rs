//! The engine's calls for races (docs/races.md): run one (or resume it), and its report.

use crate::api::Engine;
use crate::base::clean_report::CleanReport;
use crate::base::error::EngineError;
use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::ops::clean::{CleanOptions, clean};
use crate::ops::race::{
    Driving, RaceOptions, RaceReport, race, race_detached, race_driven, race_losers, race_report,
    race_resume,
};

impl Engine {
    /// Runs the race (or resumes it, the same command again) to its end: `ganger.race/1`.
    pub fn race(&self, mut request: RaceOptions, notices: &mut dyn Notices) -> Result<RaceReport> {
        request.start.commander = self.who(request.start.commander.take());
        race(self.workspace(), request, notices)
    }

    /// Records the race and drives it in the background (a detached `ganger race-host`);
    /// its report as it stands.
    pub fn race_detached(
        &self,
        mut request: RaceOptions,
        notices: &mut dyn Notices,
    ) -> Result<RaceReport> {
        request.start.commander = self.who(request.start.commander.take());
        race_detached(self.workspace(), request, notices)
    }

    /// Runs the race as `driving` says: in the foreground or the background, its attempts
    /// started by the race or queued for the scheduler (`--queue`).
    pub fn race_driven(
        &self,
        mut request: RaceOptions,
        driving: Driving,
        notices: &mut dyn Notices,
    ) -> Result<RaceReport> {
        request.start.commander = self.who(request.start.commander.take());
        race_driven(self.workspace(), request, driving, notices)
    }

    /// The fix round `ganger race SLUG --graft` sends the race's winner (its task's slug and
    /// a brief of the passing losers' hunks in files the winner left alone and the reviewers'
    /// reasons against it); send it with [`Engine::fix`].
    pub fn race_graft(&self, slug: &str) -> Result<crate::task::fix::FixOptions> {
        crate::ops::race::graft_request(self.workspace(), slug)
    }

    /// Drives the race `slug` to its end as its recorded request says (`ganger race-host`).
    pub fn race_resume(&self, slug: &str, notices: &mut dyn Notices) -> Result<RaceReport> {
        race_resume(self.workspace(), slug, notices)
    }

    /// The report of the race `slug`, if `slug` is a race.
    pub fn race_report(&self, slug: &str) -> Result<Option<RaceReport>> {
        race_report(self.workspace(), slug)
    }

    /// `clean` with races among the slugs: a race's losers and judges are cleaned with
    /// `--force` (their work is kept in `refs/ganger/`, as `--force` keeps it), the winner is
    /// left for `merge`; the other slugs as asked.
    pub(crate) fn clean_races(
        &self,
        request: CleanOptions,
        notices: &mut dyn Notices,
    ) -> Result<CleanReport> {
        let ws = self.workspace();
        let (mut losers, mut tasks) = (Vec::new(), Vec::new());
        for slug in &request.slugs {
            match race_losers(ws, slug)? {
                Some(found) => losers.extend(found),
                None => tasks.push(slug.clone()),
            }
        }
        if tasks.len() == request.slugs.len() {
            return clean(ws, &request, notices);
        }
        // Never an empty list of slugs: to `clean` that means every task.
        let mut reports = Vec::new();
        if !losers.is_empty() {
            let forced = CleanOptions {
                slugs: losers,
                force: true,
                ..request.clone()
            };
            reports.push(clean(ws, &forced, notices)?);
        }
        if !tasks.is_empty() {
            reports.push(clean(
                ws,
                &CleanOptions {
                    slugs: tasks,
                    ..request
                },
                notices,
            )?);
        }
        reports
            .into_iter()
            .reduce(|mut all, more| {
                all.tasks.extend(more.tasks);
                all
            })
            .ok_or_else(|| EngineError::invalid("the race has no task to clean but its winner"))
    }
}

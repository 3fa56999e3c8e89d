//! The engine's calls for races (docs/races.md): run one (or resume it), and its report.

use crate::api::Engine;
use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::ops::race::{RaceOptions, RaceReport, race, race_detached, race_report, race_resume};

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

    /// Drives the race `slug` to its end as its recorded request says (`ganger race-host`).
    pub fn race_resume(&self, slug: &str, notices: &mut dyn Notices) -> Result<RaceReport> {
        race_resume(self.workspace(), slug, notices)
    }

    /// The report of the race `slug`, if `slug` is a race.
    pub fn race_report(&self, slug: &str) -> Result<Option<RaceReport>> {
        race_report(self.workspace(), slug)
    }
}

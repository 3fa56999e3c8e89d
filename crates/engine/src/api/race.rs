//! The engine's calls for races (docs/races.md): run one (or resume it), and its report.

use crate::api::Engine;
use crate::base::error::Result;
use crate::base::notice::Notices;
use crate::ops::race::{RaceOptions, RaceReport, race, race_report};

impl Engine {
    /// Runs the race (or resumes it, the same command again) to its end: `ganger.race/1`.
    pub fn race(&self, mut request: RaceOptions, notices: &mut dyn Notices) -> Result<RaceReport> {
        request.start.commander = self.who(request.start.commander.take());
        race(self.workspace(), request, notices)
    }

    /// The report of the race `slug`, if `slug` is a race.
    pub fn race_report(&self, slug: &str) -> Result<Option<RaceReport>> {
        race_report(self.workspace(), slug)
    }
}

//! `ganger race`: runs a race (or resumes it: the same command again) in the foreground and
//! prints its report. Exit 0 when an attempt won, 1 when none passed, 2 for bad input.

use super::round::brief;
use crate::printer::{self, Printer};
use crate::race_args::RaceArgs;
use crate::{Failure, Outcome, exit};
use ganger_engine::race::{Driving, RaceOptions, RaceReport};
use ganger_engine::{Engine, FixOptions, StartOptions};

/// The exit code of a race's report: 0 won, 1 failed (or still running).
pub(crate) fn race_code(report: &RaceReport) -> u8 {
    if report.winner.is_some() {
        exit::OK
    } else {
        exit::NOT_DONE
    }
}

pub(crate) fn run(engine: &Engine, args: RaceArgs) -> Outcome {
    if args.graft {
        return graft(engine, args);
    }
    let out = Printer::new(args.json);
    let options = RaceOptions {
        slug: args.slug.clone(),
        brief: brief(args.text.task_text()),
        attempts: args.attempts.unwrap_or_default(),
        first_green: args.first_green,
        max: args.max,
        start: StartOptions {
            slug: args.slug,
            base: args.base,
            commander: args.as_name,
            permission: args.permission,
            checks: args.checks.checks,
            until_green: args.checks.until_green,
            budget: ganger_engine::Budget {
                usd: args.budget_usd,
                tokens: args.budget_tokens,
            },
            ..args.place.start_options(args.run)
        },
    };
    let driving = Driving {
        detach: args.detach,
        queue: args.queue,
    };
    let report = engine
        .race_driven(options, driving, &mut out.notices())
        .map_err(Failure::Engine)?;
    out.print(&report, || printer::race_text(&report))?;
    if args.detach {
        return Ok(exit::OK);
    }
    Ok(race_code(&report))
}

/// `ganger race SLUG --graft`: the winner's fix round, sent and printed as `fix` sends it.
fn graft(engine: &Engine, args: RaceArgs) -> Outcome {
    let out = Printer::new(args.json);
    let options = FixOptions {
        commander: args.as_name,
        checks: args.checks.checks,
        until_green: args.checks.until_green,
        ..engine.race_graft(&args.slug).map_err(Failure::Engine)?
    };
    let since = super::round::now_ms();
    let sent = engine
        .fix(options, false, &mut out.notices())
        .map_err(Failure::Engine)?;
    super::round::print_sent(engine, sent, out, since)
}

/// `ganger race-host SLUG`: the detached driver of a race, its output in the race's log.
pub(crate) fn host(engine: &Engine, slug: &str) -> Outcome {
    let out = Printer::new(false);
    let report = engine
        .race_resume(slug, &mut out.notices())
        .map_err(Failure::Engine)?;
    out.print(&report, || printer::race_text(&report))?;
    Ok(race_code(&report))
}

//! `ganger agents canary`: the conformance suite on each agent's newest release and on the
//! pinned one (the engine's [`ganger_engine::canary`]); the table, or `ganger.agents-canary/1`.
//! Exit 0 when every newest version passes every scenario, 1 when one does not, 2 on bad input.

use super::agents::chosen;
use crate::exit;
use crate::printer::{self, Printer};
use crate::{Failure, Outcome};
use ganger_engine::EngineError;
use ganger_engine::canary::{CanaryOptions, SCENARIO_LIMIT, Suite};
use std::path::Path;

pub(crate) fn run(
    dir: Option<&Path>,
    names: &[String],
    suite: Option<&Path>,
    jobs: Option<usize>,
    json: bool,
) -> Outcome {
    let out = Printer::new(json);
    let agents = chosen(names)?;
    let here = match dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| EngineError::invalid(format!("no current directory: {e}")))?,
    };
    let suite = match suite {
        Some(binary) => Suite::at(&here.join(binary))?,
        None => {
            out.note("building the conformance suite with cargo ...\n")?;
            Suite::build(&here)?
        }
    };
    let jobs = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
    });
    let options = CanaryOptions {
        agents,
        suite,
        jobs,
        limit: SCENARIO_LIMIT,
    };
    let notify = |notice: ganger_engine::canary::CanaryNotice| {
        let _ = out.note(&printer::canary_notice_line(&notice));
    };
    let report = ganger_engine::canary::run(&options, &notify).map_err(Failure::Engine)?;
    out.print(&report, || printer::canary_text(&report))?;
    Ok(if report.agents.iter().all(|a| a.newest_passes) {
        exit::OK
    } else {
        exit::NOT_DONE
    })
}

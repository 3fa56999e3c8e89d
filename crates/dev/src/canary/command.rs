//! `ganger-dev canary`: the conformance suite on each agent's newest release and on the
//! pinned one; the table, or `ganger.agents-canary/1`. Exit 0 when every newest version passes
//! every scenario, 1 when one does not, 2 on bad input.

use super::{CanaryNotice, CanaryOptions, CanaryReport, SCENARIO_LIMIT, Suite, text};
use crate::output;
use ganger_agents::Adapter;
use ganger_engine::{EngineError, Result};
use std::path::{Path, PathBuf};

/// `ganger-dev canary`'s options (as `ganger agents canary` takes them).
#[derive(Debug, clap::Args)]
pub struct CanaryArgs {
    #[command(flatten)]
    pub run: CanaryRun,
    /// Print JSON (`ganger.agents-canary/1`, docs/json.md).
    #[arg(long)]
    pub json: bool,
}

// Which agents, which suite, how many at once: what `move-pins` passes on too. (Not a doc
// comment: clap would make it the about of the commands that flatten it.)
#[derive(Debug, clap::Args)]
pub struct CanaryRun {
    /// Agent names; default: every one.
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
    /// A built conformance test binary, instead of building it with cargo from the ganger
    /// source tree this runs in.
    #[arg(long, value_name = "BIN")]
    pub suite: Option<PathBuf>,
    /// How many scenarios run at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: Option<u16>,
}

/// Runs the canary in `here`: its table or its JSON; the exit code.
pub fn run(here: &Path, args: &CanaryArgs) -> Result<u8> {
    let report = report(here, &args.run, args.json)?;
    output::print(args.json, &report, || text::canary_text(&report))?;
    Ok(if report.agents.iter().all(|a| a.newest_passes) {
        output::OK
    } else {
        output::NOT_DONE
    })
}

/// Runs the canary in `here`, its steps on stderr (unless `json`), and its report.
pub fn report(here: &Path, args: &CanaryRun, json: bool) -> Result<CanaryReport> {
    let agents = chosen(&args.names)?;
    let suite = match &args.suite {
        Some(binary) => Suite::at(&here.join(binary))?,
        None => {
            output::note(json, "building the conformance suite with cargo ...\n");
            Suite::build(here)?
        }
    };
    let jobs = args.jobs.map(usize::from).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
    });
    let options = CanaryOptions {
        agents,
        suite,
        jobs,
        limit: SCENARIO_LIMIT,
    };
    let notify = |notice: CanaryNotice| output::note(json, &text::canary_notice_line(&notice));
    super::run(&options, &notify)
}

/// The agents named (`all`, or none, for every one); an unknown name is an error naming it.
fn chosen(names: &[String]) -> Result<Vec<&'static dyn Adapter>> {
    let all = ganger_agents::adapters();
    if names.is_empty() || names.iter().any(|n| n == "all") {
        return Ok(all.to_vec());
    }
    let mut agents = Vec::new();
    for name in names {
        let Some(agent) = ganger_agents::adapter(name) else {
            let known: Vec<&str> = all.iter().map(|a| a.name()).collect();
            let known = known.join(", ");
            return Err(EngineError::invalid(format!(
                "unknown agent {name:?}; known agents: {known}"
            )));
        };
        agents.push(agent);
    }
    Ok(agents)
}

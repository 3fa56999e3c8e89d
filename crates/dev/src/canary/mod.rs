//! `ganger-dev canary` (and `ganger agents canary`, which runs it): the conformance suite run
//! on each agent's newest published release
//! beside the pinned one, so that a CLI update that breaks the integration is seen before
//! users' auto-updates find it (docs/agents/canary.md).
//!
//! The suite is the conformance test binary itself (`crates/cli/tests/conformance`), not a
//! copy: the canary builds it from ganger's source tree (or takes a built one), lists its
//! `AGENT::SCENARIO` tests, and runs each in a process of its own with `GANGER_TEST_<AGENT>`
//! naming the program under test, which the suite's agent lookup honours before anything
//! else. The newest version goes into a scratch cache of its own
//! (`~/.cache/ganger/canary/NAME-VERSION`), never over ganger's cache of pinned agents; the
//! pinned one is taken from that cache when it is there. Each run's report is kept beside them
//! ([`last_report_path`]) for `scripts/move-pins`. Nothing else changes: moving a pin is that
//! script's business.
//!
//! - [`command`]: the command: its options, the run, the table or the JSON, the exit code.
//! - [`newest`]: the newest published version, and the scratch installs.
//! - [`suite`]: building, listing and running the suite, and why a scenario failed.
//! - [`text`]: the report as a table and conclusions.

pub mod command;
mod newest;
mod suite;
pub mod text;

pub use suite::Suite;

use ganger_agents::Adapter;
use ganger_engine::{EngineError, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// How long one scenario may run before it is stopped (the suite's nextest limit).
pub const SCENARIO_LIMIT: Duration = Duration::from_secs(300);

/// What to run.
pub struct CanaryOptions {
    /// The agents, in the order to report them.
    pub agents: Vec<&'static dyn Adapter>,
    /// The suite to run.
    pub suite: Suite,
    /// How many scenarios run at once.
    pub jobs: usize,
    /// How long one scenario may run.
    pub limit: Duration,
}

/// A step of the canary, for the front end to show.
#[derive(Debug, Clone, PartialEq)]
pub enum CanaryNotice {
    /// The newest version of an agent, as npm has it.
    Newest { agent: String, version: String },
    /// A version is being installed into the scratch cache.
    Installing { agent: String, version: String },
    /// A scenario ended.
    Ran {
        agent: String,
        version: String,
        scenario: String,
        outcome: Outcome,
    },
}

/// `ganger.agents-canary/1` (docs/json.md).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CanaryReport {
    pub schema: &'static str,
    /// The conformance test binary that ran.
    pub suite: PathBuf,
    pub agents: Vec<AgentCanary>,
}

/// Where the last run's report is kept, as `ganger.agents-canary/1`.
pub fn last_report_path() -> PathBuf {
    canary_root().join("last-report.json")
}

/// One agent: its pinned and newest versions and each scenario's result for both.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AgentCanary {
    pub name: String,
    pub package: String,
    pub pinned: String,
    pub newest: String,
    pub scenarios: Vec<ScenarioResult>,
    /// Whether the newest version passed every scenario (and there were some).
    pub newest_passes: bool,
}

/// One scenario's result for the pinned and the newest version (the same run when they are
/// the same version).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScenarioResult {
    pub name: String,
    pub pinned: Outcome,
    pub newest: Outcome,
}

/// How one run of a scenario ended.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Outcome {
    /// `pass`, `fail`, or `timed-out`.
    pub result: &'static str,
    /// Why it failed, in a line or a few: the assertion and the round's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub seconds: f64,
    /// Everything the scenario printed.
    pub log: PathBuf,
}

impl Outcome {
    /// Whether the scenario passed.
    pub fn passed(&self) -> bool {
        self.result == "pass"
    }
}

/// The canary's own directory: scratch installs and logs.
pub fn canary_root() -> PathBuf {
    ganger_engine::install::cache_root().join("canary")
}

/// One version of one agent to run the scenarios with.
struct Subject {
    agent: &'static dyn Adapter,
    version: String,
    program: PathBuf,
}

/// Runs the canary for `options.agents`, reporting each step to `notify`.
pub fn run(
    options: &CanaryOptions,
    notify: &(dyn Fn(CanaryNotice) + Sync),
) -> Result<CanaryReport> {
    if options.agents.is_empty() {
        return Err(EngineError::invalid("no agent to run the canary for"));
    }
    let listed = options.suite.list()?;
    let mut plans = Vec::new();
    for &agent in &options.agents {
        let newest = newest::newest_version(agent)?;
        notify(CanaryNotice::Newest {
            agent: agent.name().into(),
            version: newest.clone(),
        });
        let pinned = subject(agent, agent.tested_version(), notify)?;
        let latest = match newest == agent.tested_version() {
            true => None,
            false => Some(subject(agent, &newest, notify)?),
        };
        let prefix = format!("{}::", agent.name());
        let scenarios: Vec<String> = listed
            .iter()
            .filter_map(|test| test.strip_prefix(&prefix))
            .map(str::to_owned)
            .collect();
        if scenarios.is_empty() {
            return Err(EngineError::invalid(format!(
                "the conformance suite at {} has no scenario for {}",
                options.suite.binary().display(),
                agent.name()
            )));
        }
        plans.push((pinned, latest, scenarios));
    }
    let mut jobs = Vec::new();
    for (index, (pinned, latest, scenarios)) in plans.iter().enumerate() {
        for scenario in scenarios {
            jobs.push((index, true, pinned, scenario.as_str()));
            if let Some(latest) = latest {
                jobs.push((index, false, latest, scenario.as_str()));
            }
        }
    }
    let results = run_jobs(options, &jobs, notify);
    let agents = plans
        .iter()
        .enumerate()
        .map(|(index, (pinned, latest, scenarios))| {
            let scenarios: Vec<ScenarioResult> = scenarios
                .iter()
                .map(|scenario| {
                    let find = |of_pinned: bool| {
                        results
                            .iter()
                            .find(|(i, p, s, _)| *i == index && *p == of_pinned && s == scenario)
                            .map(|(_, _, _, outcome)| outcome.clone())
                    };
                    let pinned_outcome = find(true).unwrap_or_else(|| missing(scenario));
                    let newest_outcome = match latest {
                        Some(_) => find(false).unwrap_or_else(|| missing(scenario)),
                        None => pinned_outcome.clone(),
                    };
                    ScenarioResult {
                        name: scenario.clone(),
                        pinned: pinned_outcome,
                        newest: newest_outcome,
                    }
                })
                .collect();
            let newest_passes =
                !scenarios.is_empty() && scenarios.iter().all(|s| s.newest.passed());
            AgentCanary {
                name: pinned.agent.name().into(),
                package: pinned.agent.npm_package().into(),
                pinned: pinned.version.clone(),
                newest: latest
                    .as_ref()
                    .map_or_else(|| pinned.version.clone(), |l| l.version.clone()),
                scenarios,
                newest_passes,
            }
        })
        .collect();
    let report = CanaryReport {
        schema: "ganger.agents-canary/1",
        suite: options.suite.binary().to_path_buf(),
        agents,
    };
    let path = last_report_path();
    let root = canary_root();
    std::fs::create_dir_all(&root).map_err(|e| EngineError::io("create", &root, e))?;
    let text = serde_json::to_string_pretty(&report)
        .map_err(|e| EngineError::environment("failed to write the canary's report", e))?;
    std::fs::write(&path, format!("{text}\n")).map_err(|e| EngineError::io("write", &path, e))?;
    Ok(report)
}

/// The outcome of a scenario whose run left no result (it cannot happen unless a worker
/// thread died).
fn missing(scenario: &str) -> Outcome {
    Outcome {
        result: "fail",
        why: Some(format!("{scenario} was not run")),
        seconds: 0.0,
        log: PathBuf::new(),
    }
}

/// The program of `version` of `agent`: ganger's cache when the pinned version is there, else
/// a scratch install of the canary's own.
fn subject(
    agent: &'static dyn Adapter,
    version: &str,
    notify: &(dyn Fn(CanaryNotice) + Sync),
) -> Result<Subject> {
    let cached = (version == agent.tested_version())
        .then(|| ganger_engine::install::cached_program(agent))
        .flatten();
    let program = match cached {
        Some(program) => program,
        None => newest::scratch_install(agent, version, &canary_root(), notify)?,
    };
    Ok(Subject {
        agent,
        version: version.to_owned(),
        program,
    })
}

type Job<'a> = (usize, bool, &'a Subject, &'a str);
type Done = (usize, bool, String, Outcome);

/// Runs every job, `options.jobs` at a time.
fn run_jobs(
    options: &CanaryOptions,
    jobs: &[Job<'_>],
    notify: &(dyn Fn(CanaryNotice) + Sync),
) -> Vec<Done> {
    let next = Mutex::new(0usize);
    let done = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1).min(jobs.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let taken = {
                        let mut next = next.lock().unwrap_or_else(|p| p.into_inner());
                        let taken = *next;
                        *next += 1;
                        taken
                    };
                    let Some(&(index, of_pinned, subject, scenario)) = jobs.get(taken) else {
                        break;
                    };
                    let outcome = run_one(options, subject, scenario);
                    notify(CanaryNotice::Ran {
                        agent: subject.agent.name().into(),
                        version: subject.version.clone(),
                        scenario: scenario.into(),
                        outcome: outcome.clone(),
                    });
                    done.lock().unwrap_or_else(|p| p.into_inner()).push((
                        index,
                        of_pinned,
                        scenario.to_owned(),
                        outcome,
                    ));
                }
            });
        }
    });
    done.into_inner().unwrap_or_else(|p| p.into_inner())
}

fn run_one(options: &CanaryOptions, subject: &Subject, scenario: &str) -> Outcome {
    let log = log_path(&canary_root(), subject, scenario);
    let test = format!("{}::{scenario}", subject.agent.name());
    let variable = format!("GANGER_TEST_{}", subject.agent.name().to_uppercase());
    options
        .suite
        .run(&test, (&variable, &subject.program), options.limit, &log)
}

/// Where a scenario's output is kept: `canary/logs/NAME-VERSION/SCENARIO.log`.
fn log_path(root: &Path, subject: &Subject, scenario: &str) -> PathBuf {
    root.join("logs")
        .join(format!("{}-{}", subject.agent.name(), subject.version))
        .join(format!("{scenario}.log"))
}

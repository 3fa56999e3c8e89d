//! The canary's report as text: a table of every scenario's result for the pinned and the
//! newest version of each agent, then one conclusion per agent (and why each failing scenario
//! failed).

use super::{AgentCanary, CanaryNotice, CanaryReport};
use std::fmt::Write;

/// The most characters of a failure's explanation in the conclusions.
const WHY_CHARS: usize = 300;

/// The table and the conclusions.
pub fn canary_text(report: &CanaryReport) -> String {
    let header = ["agent", "pinned", "newest", "scenario", "pinned", "newest"];
    let mut rows: Vec<[String; 6]> = Vec::new();
    for agent in &report.agents {
        for (index, scenario) in agent.scenarios.iter().enumerate() {
            let first = index == 0;
            rows.push([
                if first {
                    agent.name.clone()
                } else {
                    String::new()
                },
                if first {
                    agent.pinned.clone()
                } else {
                    String::new()
                },
                if first {
                    agent.newest.clone()
                } else {
                    String::new()
                },
                scenario.name.clone(),
                scenario.pinned.result.to_owned(),
                scenario.newest.result.to_owned(),
            ]);
        }
    }
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: [&str; 6]| {
        let mut text = String::new();
        for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if index + 1 == cells.len() {
                text.push_str(cell);
            } else {
                let _ = write!(text, "{cell:<width$}  ");
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&mut out, header);
    for row in &rows {
        line(&mut out, row.each_ref().map(String::as_str));
    }
    out.push('\n');
    for agent in &report.agents {
        out.push_str(&conclusion(agent));
    }
    out
}

/// What the canary concludes for one agent.
fn conclusion(agent: &AgentCanary) -> String {
    let total = agent.scenarios.len();
    let failing: Vec<_> = agent
        .scenarios
        .iter()
        .filter(|s| !s.newest.passed())
        .collect();
    let pinned_failing = agent
        .scenarios
        .iter()
        .filter(|s| !s.pinned.passed())
        .count();
    let mut out = String::new();
    let same = agent.newest == agent.pinned;
    match (same, failing.is_empty()) {
        (true, true) => {
            let _ = writeln!(
                out,
                "{}: {} is the newest release and passes every scenario",
                agent.name, agent.pinned
            );
        }
        (true, false) => {
            let _ = writeln!(
                out,
                "{}: {} is the newest release; it fails {} of {total} scenarios:",
                agent.name,
                agent.pinned,
                failing.len()
            );
        }
        (false, true) => {
            let _ = writeln!(
                out,
                "{}: {} passes every scenario; the pin can move from {} (scripts/move-pins)",
                agent.name, agent.newest, agent.pinned
            );
        }
        (false, false) => {
            let _ = writeln!(
                out,
                "{}: {} fails {} of {total} scenarios; the pin stays at {}{}:",
                agent.name,
                agent.newest,
                failing.len(),
                agent.pinned,
                match pinned_failing {
                    0 => String::new(),
                    n => format!(" (which fails {n} itself)"),
                }
            );
        }
    }
    for scenario in failing {
        let why = scenario.newest.why.as_deref().unwrap_or("no reason kept");
        let why: String = why.chars().take(WHY_CHARS).collect();
        let _ = writeln!(
            out,
            "  {}: {} ({}) [{}]",
            scenario.name,
            scenario.newest.result,
            why,
            scenario.newest.log.display()
        );
    }
    out
}

/// One progress line, for stderr.
pub fn canary_notice_line(notice: &CanaryNotice) -> String {
    match notice {
        CanaryNotice::Newest { agent, version } => {
            format!("{agent}: the newest release is {version}\n")
        }
        CanaryNotice::Installing { agent, version } => {
            format!("{agent}: installing {version} into the canary's cache\n")
        }
        CanaryNotice::Ran {
            agent,
            version,
            scenario,
            outcome,
        } => format!(
            "{agent} {version} {scenario}: {} ({:.1} s)\n",
            outcome.result, outcome.seconds
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canary::{Outcome, ScenarioResult};
    use std::path::PathBuf;

    fn outcome(result: &'static str, why: Option<&str>) -> Outcome {
        Outcome {
            result,
            why: why.map(str::to_owned),
            seconds: 1.0,
            log: PathBuf::from("/c/logs/x.log"),
        }
    }

    fn agent(
        name: &str,
        pinned: &str,
        newest: &str,
        results: &[(&str, bool, bool)],
    ) -> AgentCanary {
        let scenarios: Vec<ScenarioResult> = results
            .iter()
            .map(|(scenario, old, new)| ScenarioResult {
                name: (*scenario).to_owned(),
                pinned: outcome(
                    if *old { "pass" } else { "fail" },
                    (!*old).then_some("old broke"),
                ),
                newest: outcome(
                    if *new { "pass" } else { "fail" },
                    (!*new).then_some("new broke"),
                ),
            })
            .collect();
        AgentCanary {
            name: name.into(),
            package: format!("pkg-{name}"),
            pinned: pinned.into(),
            newest: newest.into(),
            newest_passes: scenarios.iter().all(|s| s.newest.passed()),
            scenarios,
        }
    }

    #[test]
    fn the_table_lines_up_and_each_agent_gets_a_conclusion() {
        let report = CanaryReport {
            schema: "ganger.agents-canary/1",
            suite: PathBuf::from("/s/conformance"),
            agents: vec![
                agent(
                    "opencode",
                    "1.18.33",
                    "1.18.33",
                    &[("writes_a_file", true, true)],
                ),
                agent(
                    "claude",
                    "2.1.197",
                    "2.1.332",
                    &[
                        ("http_401_fails", true, true),
                        ("writes_a_file", true, true),
                    ],
                ),
                agent(
                    "qwen",
                    "0.15.10",
                    "0.24.4",
                    &[
                        ("http_401_fails", true, false),
                        ("writes_a_file", false, true),
                    ],
                ),
            ],
        };
        assert_eq!(
            canary_text(&report),
            "\
agent     pinned   newest   scenario        pinned  newest
opencode  1.18.33  1.18.33  writes_a_file   pass    pass
claude    2.1.197  2.1.332  http_401_fails  pass    pass
                            writes_a_file   pass    pass
qwen      0.15.10  0.24.4   http_401_fails  pass    fail
                            writes_a_file   fail    pass

opencode: 1.18.33 is the newest release and passes every scenario
claude: 2.1.332 passes every scenario; the pin can move from 2.1.197 (scripts/move-pins)
qwen: 0.24.4 fails 1 of 2 scenarios; the pin stays at 0.15.10 (which fails 1 itself):
  http_401_fails: fail (new broke) [/c/logs/x.log]
"
        );
    }
}

//! `ganger-dev move-pins`: moves the agent pins that the canary passes
//! (docs/agents/canary.md).
//!
//! Runs the canary (its table as it prints it), or reads a report it printed (`--from-json`);
//! for each agent whose newest release is newer than its pin and passes every scenario:
//! rewrites its line in `pinned-agents.txt` and the `tested_version` of its facts (`FACTS` in
//! its `adapter.rs`), and installs it into ganger's cache. An agent with a failing scenario
//! keeps its pin, and why is printed. When a pin moved, it runs the conformance suite with the
//! new pins and regenerates the conformance table of docs/agents.md from that run
//! (`scripts/conformance-table`); it always writes the canary's table between that page's
//! `canary` markers. It commits nothing, and lists the files that still name an old version
//! (docs a person updates).
//!
//! Exit 0 when every agent is at its newest release or moved there, 1 when a pin stayed
//! because a scenario failed (or the suite failed after moving), 2 on bad input.

use crate::canary::command::{CanaryRun, report};
use crate::output;
use ganger_engine::{EngineError, Result};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// `ganger-dev move-pins`'s options: the canary's, passed on, and its own.
#[derive(Debug, clap::Args)]
pub struct MovePinsArgs {
    #[command(flatten)]
    pub canary: CanaryRun,
    /// A report `ganger-dev canary --json` printed, instead of running the canary.
    #[arg(long, value_name = "FILE")]
    pub from_json: Option<PathBuf>,
    /// Say what would move, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `ganger.agents-canary/1`, as far as moving a pin reads it.
#[derive(Debug, Deserialize)]
struct Report {
    schema: String,
    agents: Vec<Agent>,
}

#[derive(Debug, Deserialize)]
struct Agent {
    name: String,
    package: String,
    pinned: String,
    newest: String,
    newest_passes: bool,
    scenarios: Vec<Scenario>,
}

#[derive(Debug, Deserialize)]
struct Scenario {
    name: String,
    pinned: Run,
    newest: Run,
}

#[derive(Debug, Deserialize)]
struct Run {
    result: String,
    why: Option<String>,
}

/// Moves the pins the canary passes, in the ganger source tree that holds `here`.
pub fn run(here: &Path, args: &MovePinsArgs) -> Result<u8> {
    let root = source_tree(here)?;
    let report = match &args.from_json {
        Some(file) => read_report(&here.join(file))?,
        None => run_canary(here, args)?,
    };
    let mut moved = Vec::new();
    let mut stayed = false;
    for agent in &report.agents {
        let (name, old, new) = (&agent.name, &agent.pinned, &agent.newest);
        if old == new {
            output::say(&format!("{name}: {old} is the newest release\n"));
        } else if release(new) < release(old) {
            output::say(&format!(
                "{name}: stays at {old}, newer than npm's latest release {new}\n"
            ));
        } else if agent.newest_passes {
            move_pin(&root, agent, args.dry_run)?;
            let dry = if args.dry_run { " (dry run)" } else { "" };
            output::say(&format!("{name}: {old} -> {new}{dry}\n"));
            moved.push(agent);
        } else {
            stayed = true;
            output::say(&format!("{name}: stays at {old}; {new} fails:\n"));
            for scenario in agent.scenarios.iter().filter(|s| s.newest.result != "pass") {
                let why = scenario.newest.why.as_deref().unwrap_or("no reason kept");
                let result = &scenario.newest.result;
                output::say(&format!("  {}: {result} ({why})\n", scenario.name));
            }
        }
    }
    let mut code = if stayed { output::NOT_DONE } else { output::OK };
    if args.dry_run {
        return Ok(code);
    }
    write_between_markers(&root, "canary", &canary_table(&report))?;
    if !moved.is_empty() && !check_the_moved_pins(&root, &moved)? {
        code = output::NOT_DONE;
    }
    Ok(code)
}

/// The ganger source tree that holds `here`, else the one this program was built from.
fn source_tree(here: &Path) -> Result<PathBuf> {
    let built_from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    here.ancestors()
        .chain(std::iter::once(built_from.as_path()))
        .find(|dir| dir.join("pinned-agents.txt").is_file() && dir.join("crates/dev").is_dir())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            EngineError::invalid(format!(
                "{} is not in a ganger source tree, nor is {}: moving a pin rewrites its sources",
                here.display(),
                built_from.display()
            ))
        })
}

fn read_report(file: &Path) -> Result<Report> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| EngineError::invalid(format!("cannot read {}: {e}", file.display())))?;
    let report: Report = serde_json::from_str(&text)
        .map_err(|e| EngineError::invalid(format!("cannot read {}: {e}", file.display())))?;
    if report.schema != "ganger.agents-canary/1" {
        return Err(EngineError::invalid(format!(
            "{} is {:?}, not ganger.agents-canary/1",
            file.display(),
            report.schema
        )));
    }
    Ok(report)
}

/// The canary, run here with its table printed as `ganger-dev canary` prints it.
fn run_canary(here: &Path, args: &MovePinsArgs) -> Result<Report> {
    let report = report(here, &args.canary, false)?;
    output::say(&crate::canary::text::canary_text(&report));
    let value = serde_json::to_value(&report)
        .map_err(|e| EngineError::environment("failed to read the canary's report", e))?;
    serde_json::from_value(value)
        .map_err(|e| EngineError::environment("failed to read the canary's report", e))
}

/// Rewrites `agent`'s pin in `pinned-agents.txt` and in its adapter (checked first; with
/// `dry_run`, only checked).
fn move_pin(root: &Path, agent: &Agent, dry_run: bool) -> Result<()> {
    let (package, old, new) = (&agent.package, &agent.pinned, &agent.newest);
    let pins_path = root.join("pinned-agents.txt");
    let pins = read(&pins_path)?;
    let line = format!("{package}@{old}");
    if !pins.lines().any(|l| l == line) {
        return Err(EngineError::invalid(format!(
            "pinned-agents.txt has no line {line}"
        )));
    }
    let adapter_path = root.join(format!("crates/agents/src/{}/adapter.rs", agent.name));
    let source = read(&adapter_path)?;
    let held = format!("tested_version: \"{old}\"");
    if !source.contains(&held) {
        return Err(EngineError::invalid(format!(
            "crates/agents/src/{}/adapter.rs holds no tested_version {old}",
            agent.name
        )));
    }
    if dry_run {
        return Ok(());
    }
    let pins: Vec<String> = pins
        .split_inclusive('\n')
        .map(|l| match l.strip_suffix('\n').unwrap_or(l) == line {
            true => l.replacen(&line, &format!("{package}@{new}"), 1),
            false => l.to_owned(),
        })
        .collect();
    write(&pins_path, &pins.concat())?;
    let source = source.replace(&held, &format!("tested_version: \"{new}\""));
    write(&adapter_path, &source)
}

/// `2.1.332` as ([2, 1, 332], 1, ""), for ordering; a pre-release sorts before its release.
fn release(version: &str) -> (Vec<u64>, u8, String) {
    let (core, tag) = version.split_once('-').unwrap_or((version, ""));
    let core = core.split('+').next().unwrap_or_default();
    let numbers = core.split('.').map(|p| p.parse().unwrap_or(0)).collect();
    match tag {
        "" => (numbers, 1, String::new()),
        tag => (numbers, 0, tag.to_owned()),
    }
}

/// Scenarios by agent, each cell `pinned / newest` (one result when they are the same).
fn canary_table(report: &Report) -> String {
    let heads: Vec<String> = report
        .agents
        .iter()
        .map(|a| match a.pinned == a.newest {
            true => format!("{} {}", a.name, a.pinned),
            false => format!("{} {} / {}", a.name, a.pinned, a.newest),
        })
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for scenario in report.agents.iter().flat_map(|a| &a.scenarios) {
        if !names.contains(&scenario.name.as_str()) {
            names.push(&scenario.name);
        }
    }
    let mut lines = vec![
        format!("| scenario | {} |", heads.join(" | ")),
        format!("|---|{}", "---|".repeat(report.agents.len())),
    ];
    for name in names {
        let cells: Vec<String> = report
            .agents
            .iter()
            .map(
                |agent| match agent.scenarios.iter().find(|s| s.name == name) {
                    None => "-".to_owned(),
                    Some(found) if agent.pinned == agent.newest => found.newest.result.clone(),
                    Some(found) => format!("{} / {}", found.pinned.result, found.newest.result),
                },
            )
            .collect();
        lines.push(format!("| `{name}` | {} |", cells.join(" | ")));
    }
    let day = jiff::Zoned::now().date();
    lines.push(String::new());
    lines.push(format!(
        "Written by `ganger-dev move-pins` from `ganger-dev canary` on {day}: each cell is the \
         result of the version pinned when it ran, then the newest release's where that is \
         another version."
    ));
    lines.join("\n")
}

/// Replaces what is between docs/agents.md's `<!-- MARKER:start -->` and `:end -->` lines.
fn write_between_markers(root: &Path, marker: &str, body: &str) -> Result<()> {
    let path = root.join("docs/agents.md");
    let text = read(&path)?;
    let start = format!("<!-- {marker}:start -->\n");
    let end = format!("<!-- {marker}:end -->");
    let from = text.find(&start).map(|at| at + start.len());
    let to = from.and_then(|from| text[from..].find(&end).map(|at| from + at));
    let (Some(from), Some(to)) = (from, to) else {
        return Err(EngineError::invalid(format!(
            "docs/agents.md has no {marker} markers"
        )));
    };
    write(&path, &format!("{}{body}\n{}", &text[..from], &text[to..]))
}

/// After pins moved: ganger built with them installs them, the conformance suite runs with
/// them and its table is written, and the files that still name an old version are listed.
/// Whether the suite and its table passed.
fn check_the_moved_pins(root: &Path, moved: &[&Agent]) -> Result<bool> {
    if !step(root, "cargo", &["build", "-p", "ganger-cli"])?.success() {
        return Err(EngineError::invalid("cargo could not build ganger"));
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let ganger = target.join("debug/ganger");
    let mut install = vec!["agents", "install"];
    install.extend(moved.iter().map(|a| a.name.as_str()));
    if !step(root, &ganger.to_string_lossy(), &install)?.success() {
        return Err(EngineError::invalid(
            "ganger agents install failed for the moved pins",
        ));
    }
    let suite = step(
        root,
        "cargo",
        &[
            "nextest",
            "run",
            "--no-fail-fast",
            "-p",
            "ganger-cli",
            "--test",
            "conformance",
        ],
    )?;
    // nextest keeps its store under the workspace's own target/, whatever CARGO_TARGET_DIR
    // says.
    let junit = root.join("target/nextest/default/junit.xml");
    let table = root.join("scripts/conformance-table");
    let mut passed = quiet_step(root, &table, &junit)?.success();
    if !suite.success() {
        output::note(
            false,
            "move-pins: the conformance suite failed with the moved pins (docs/agents.md's table says where)\n",
        );
        passed = false;
    }
    for agent in moved {
        list_files_naming(root, agent)?;
    }
    Ok(passed)
}

/// The files that still name `agent`'s old version (a person checks whether each should).
fn list_files_naming(root: &Path, agent: &Agent) -> Result<()> {
    let old = &agent.pinned;
    let found = Command::new("git")
        .args([
            "grep",
            "-l",
            "-F",
            old,
            "--",
            ".",
            ":!*.jsonl",
            ":!*.snap",
            ":!Cargo.lock",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| EngineError::environment("failed to run git grep", e))?;
    let files: Vec<String> = String::from_utf8_lossy(&found.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if !files.is_empty() {
        output::say(&format!(
            "{}: files that name {old} (check whether each should): {}\n",
            agent.name,
            files.join(", ")
        ));
    }
    Ok(())
}

/// Runs `program args` in `root`, saying so on stderr first.
fn step(root: &Path, program: &str, args: &[&str]) -> Result<ExitStatus> {
    output::note(false, &format!("+ {program} {}\n", args.join(" ")));
    Command::new(program)
        .args(args)
        .current_dir(root)
        .status()
        .map_err(|e| EngineError::environment(format!("failed to run {program}"), e))
}

/// `scripts/conformance-table JUNIT`, its output (the tables it wrote) dropped.
fn quiet_step(root: &Path, table: &Path, junit: &Path) -> Result<ExitStatus> {
    output::note(
        false,
        &format!("+ {} {}\n", table.display(), junit.display()),
    );
    Command::new(table)
        .arg(junit)
        .current_dir(root)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| EngineError::environment(format!("failed to run {}", table.display()), e))
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| EngineError::io("read", path, e))
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| EngineError::io("write", path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_order_by_number_and_a_pre_release_before_its_release() {
        assert!(release("2.1.332") > release("2.1.197"));
        assert!(release("0.24.4") > release("0.15.10"));
        assert!(release("1.0.0-beta.2") < release("1.0.0"));
        assert!(release("1.0.0-beta.2") > release("0.9.9"));
    }

    fn report(pinned: &str, newest: &str, results: &[(&str, &str, &str)]) -> Report {
        let run = |result: &str| Run {
            result: result.to_owned(),
            why: None,
        };
        Report {
            schema: "ganger.agents-canary/1".into(),
            agents: vec![Agent {
                name: "qwen".into(),
                package: "@qwen-code/qwen-code".into(),
                pinned: pinned.into(),
                newest: newest.into(),
                newest_passes: results.iter().all(|(_, _, new)| *new == "pass"),
                scenarios: results
                    .iter()
                    .map(|(name, old, new)| Scenario {
                        name: (*name).into(),
                        pinned: run(old),
                        newest: run(new),
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn the_table_shows_both_results_where_the_versions_differ() {
        let table = canary_table(&report(
            "0.15.10",
            "0.24.4",
            &[
                ("writes_a_file", "pass", "pass"),
                ("http_401_fails", "pass", "fail"),
            ],
        ));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "| scenario | qwen 0.15.10 / 0.24.4 |");
        assert_eq!(lines[1], "|---|---|");
        assert_eq!(lines[2], "| `writes_a_file` | pass / pass |");
        assert_eq!(lines[3], "| `http_401_fails` | pass / fail |");
        let same = canary_table(&report(
            "0.24.4",
            "0.24.4",
            &[("writes_a_file", "pass", "pass")],
        ));
        assert!(
            same.starts_with("| scenario | qwen 0.24.4 |\n|---|---|\n| `writes_a_file` | pass |"),
            "{same}"
        );
    }

    #[test]
    fn a_pin_moves_in_the_pins_file_and_the_adapter() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = root.path();
        let adapter = dir.join("crates/agents/src/qwen/adapter.rs");
        std::fs::create_dir_all(adapter.parent().unwrap_or(dir)).unwrap_or_default();
        std::fs::write(
            dir.join("pinned-agents.txt"),
            "# pins\nopencode-ai@1.0.0\n@qwen-code/qwen-code@0.15.10\n",
        )
        .unwrap_or_default();
        std::fs::write(&adapter, "    tested_version: \"0.15.10\",\n").unwrap_or_default();
        let agent = &report("0.15.10", "0.24.4", &[]).agents[0];
        move_pin(dir, agent, true).unwrap_or_else(|e| panic!("{e}"));
        assert!(read(&adapter).unwrap_or_default().contains("0.15.10"));
        move_pin(dir, agent, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read(&dir.join("pinned-agents.txt")).unwrap_or_default(),
            "# pins\nopencode-ai@1.0.0\n@qwen-code/qwen-code@0.24.4\n"
        );
        assert_eq!(
            read(&adapter).unwrap_or_default(),
            "    tested_version: \"0.24.4\",\n"
        );
        let again = move_pin(dir, agent, false).err().map(|e| e.message);
        assert_eq!(
            again.as_deref(),
            Some("pinned-agents.txt has no line @qwen-code/qwen-code@0.15.10")
        );
    }

    #[test]
    fn the_canary_table_goes_between_the_markers() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dir = root.path();
        std::fs::create_dir_all(dir.join("docs")).unwrap_or_default();
        let page = "# Agents\n<!-- canary:start -->\nold\n<!-- canary:end -->\nmore\n";
        std::fs::write(dir.join("docs/agents.md"), page).unwrap_or_default();
        write_between_markers(dir, "canary", "new table").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            read(&dir.join("docs/agents.md")).unwrap_or_default(),
            "# Agents\n<!-- canary:start -->\nnew table\n<!-- canary:end -->\nmore\n"
        );
        let none = write_between_markers(dir, "sandboxes", "x")
            .err()
            .map(|e| e.message);
        assert_eq!(
            none.as_deref(),
            Some("docs/agents.md has no sandboxes markers")
        );
    }
}

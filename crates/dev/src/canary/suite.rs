//! The conformance suite as the canary runs it: the test binary cargo builds from
//! `crates/cli/tests/conformance`, its tests listed with libtest's `--list`, each run alone
//! (`--exact NAME`) in a process of its own with the program under test named in the
//! environment, stopped after a limit like nextest stops it. Running each test alone keeps one
//! scenario's failure or hang from touching another and gives each its own log.

use super::Outcome;
use ganger_engine::{EngineError, Result};
use ganger_sandbox::{AgentCommand, run_captured};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Where the suite's sources are in ganger's source tree.
const SUITE_SOURCE: &str = "crates/cli/tests/conformance/main.rs";

/// A marker for one scenario's processes, unique on this machine (they are found by it and
/// killed when the scenario is stopped).
fn new_token() -> String {
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("canary-r{nanos:x}-{:x}-{count}", std::process::id())
}

/// The most characters of a failure's explanation.
const WHY_CHARS: usize = 600;

/// A built conformance test binary.
#[derive(Debug, Clone)]
pub struct Suite {
    binary: PathBuf,
}

impl Suite {
    /// A suite already built (`cargo test -p ganger-cli --test conformance --no-run` prints
    /// where).
    pub fn at(binary: &Path) -> Result<Suite> {
        if !binary.is_file() {
            return Err(EngineError::invalid(format!(
                "no conformance test binary at {}",
                binary.display()
            )));
        }
        Ok(Suite {
            binary: binary.to_path_buf(),
        })
    }

    /// Builds the suite with cargo in the ganger source tree that holds `dir` (it or one of
    /// its parents).
    pub fn build(dir: &Path) -> Result<Suite> {
        let root = dir
            .ancestors()
            .find(|candidate| candidate.join(SUITE_SOURCE).is_file())
            .ok_or_else(|| {
                EngineError::invalid(format!(
                    "{} is not in a ganger source tree: the canary runs the conformance suite, \
                     which is built from ganger's sources ({SUITE_SOURCE})",
                    dir.display()
                ))
                .hint("run it inside a ganger checkout (or -C DIR), or give a built suite with --suite BIN")
            })?;
        let output = Command::new("cargo")
            .args([
                "test",
                "-p",
                "ganger-cli",
                "--test",
                "conformance",
                "--no-run",
                "--message-format=json",
            ])
            .current_dir(root)
            .output()
            .map_err(|e| {
                EngineError::environment(format!("failed to run cargo in {}", root.display()), e)
            })?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let built = built_executable(&stdout);
        match (output.status.success(), built) {
            (true, Some(binary)) => Ok(Suite { binary }),
            _ => Err(EngineError::invalid(format!(
                "cargo could not build the conformance suite in {}: {}",
                root.display(),
                last_lines(&String::from_utf8_lossy(&output.stderr), 10)
            ))),
        }
    }

    /// The test binary.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The suite's test names (`AGENT::writes_a_file`, ...).
    pub fn list(&self) -> Result<Vec<String>> {
        let output = Command::new(&self.binary)
            .args(["--list", "--format", "terse"])
            .output()
            .map_err(|e| {
                EngineError::environment(format!("failed to run {}", self.binary.display()), e)
            })?;
        if !output.status.success() {
            return Err(EngineError::invalid(format!(
                "{} could not list its tests: {}",
                self.binary.display(),
                last_lines(&String::from_utf8_lossy(&output.stderr), 5)
            )));
        }
        Ok(String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.strip_suffix(": test"))
            .map(str::to_owned)
            .collect())
    }

    /// Runs the test `name` alone with `var` set in its environment, for at most `limit`,
    /// keeping what it printed in `log`.
    pub fn run(&self, name: &str, var: (&str, &Path), limit: Duration, log: &Path) -> Outcome {
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(key, _)| key != var.0 && key != "RUST_BACKTRACE")
            .collect();
        env.push((var.0.into(), var.1.into()));
        // The panic message is what the canary shows; a backtrace would only bury it.
        env.push(("RUST_BACKTRACE".into(), "0".into()));
        let command = AgentCommand {
            program: self.binary.clone(),
            args: ["--exact", name, "--test-threads", "1"]
                .map(OsString::from)
                .to_vec(),
            env,
            cwd: std::env::temp_dir(),
            stdin: None,
            token: new_token(),
            use_cgroup: false,
        };
        let clock = Instant::now();
        let captured = run_captured(&command, limit);
        let seconds = clock.elapsed().as_secs_f64();
        let (result, why, printed) = match captured {
            Err(e) => (
                "fail",
                Some(format!("the suite did not start: {e}")),
                Vec::new(),
            ),
            Ok(captured) => {
                let mut printed = captured.stdout;
                printed.extend_from_slice(&captured.stderr);
                let text = String::from_utf8_lossy(&printed).into_owned();
                match captured.exit {
                    None => (
                        "timed-out",
                        Some(format!("stopped after {} s", limit.as_secs())),
                        printed,
                    ),
                    Some(exit) if exit.code == Some(0) && ran_one(&text, name) => {
                        ("pass", None, printed)
                    }
                    Some(_) => (
                        "fail",
                        Some(failure_summary(&text).unwrap_or_else(|| last_lines(&text, 5))),
                        printed,
                    ),
                }
            }
        };
        if let Some(dir) = log.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = std::fs::write(log, &printed);
        Outcome {
            result,
            why,
            seconds,
            log: log.to_path_buf(),
        }
    }
}

/// Whether libtest's output says the test `name` ran and passed (an `--exact` filter that
/// matched nothing also exits 0).
fn ran_one(output: &str, name: &str) -> bool {
    output.contains(&format!("test {name} ... ok"))
}

/// The test executable of the `conformance` target in cargo's JSON messages.
fn built_executable(messages: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .filter(|message| message["target"]["name"] == "conformance")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
}

/// Why a scenario failed, from libtest's output: the panic's first line (the assertion), the
/// round's `reason` when the message shows a report, and an assertion's `left`/`right`.
pub fn failure_summary(output: &str) -> Option<String> {
    let mut lines = output.lines();
    lines.by_ref().find(|line| line.contains("panicked at"))?;
    let message: Vec<&str> = lines
        .take_while(|line| !line.starts_with("note: ") && !line.starts_with("stack backtrace:"))
        .collect();
    let first = message.first()?.trim().trim_end_matches('{').trim_end();
    let first = first.strip_suffix(':').unwrap_or(first);
    let mut parts = vec![first.to_owned()];
    if let Some(reason) = message
        .iter()
        .find_map(|line| line.trim().strip_prefix("\"reason\": "))
    {
        let reason = reason.trim_end_matches(',');
        let reason = serde_json::from_str::<String>(reason).unwrap_or_else(|_| reason.to_owned());
        parts.push(format!("the round's reason: {reason}"));
    }
    for side in ["left:", "right:"] {
        if let Some(line) = message.iter().find(|line| line.trim().starts_with(side)) {
            parts.push(line.trim().to_owned());
        }
    }
    let joined = parts.join("; ");
    Some(joined.chars().take(WHY_CHARS).collect())
}

/// The last `count` non-empty lines of `text`, joined by " / ".
fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(count);
    let joined = lines[from..].join(" / ");
    joined.chars().take(WHY_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// libtest's output of a failed conformance scenario (an agent with no working program),
    /// the report shortened; the agent's name is `an_agent`.
    const FAILED: &str = r#"
running 1 test
test an_agent::writes_a_file ... FAILED

failures:

---- an_agent::writes_a_file stdout ----

thread 'an_agent::writes_a_file' (1673) panicked at crates/cli/tests/conformance/scenarios.rs:99:5:
assertion `left == right` failed: {
  "agent": "an_agent",
  "reason": "the stream ended without a result line (exited with code 1)",
  "rejections": [],
  "tokens": {
    "reasoning": 0
  }
}
  left: String("failed")
 right: "done"
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    an_agent::writes_a_file

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 64 filtered out; finished in 0.31s
"#;

    #[test]
    fn a_failure_is_summed_up_by_its_assertion_the_round_s_reason_and_both_sides() {
        assert_eq!(
            failure_summary(FAILED).as_deref(),
            Some(
                "assertion `left == right` failed; the round's reason: the stream ended without a result line (exited with code 1); left: String(\"failed\"); right: \"done\""
            )
        );
        let plain = "thread 'an_agent::x' (9) panicked at scenarios.rs:1:1:\nno request carried both rounds' prompts\nnote: run with\n";
        assert_eq!(
            failure_summary(plain).as_deref(),
            Some("no request carried both rounds' prompts")
        );
        assert_eq!(failure_summary("test result: ok.\n"), None);
        assert!(!ran_one(FAILED, "an_agent::writes_a_file"));
        assert!(ran_one(
            "test an_agent::writes_a_file ... ok\n",
            "an_agent::writes_a_file"
        ));
    }

    #[test]
    fn cargo_s_messages_name_the_suite_s_executable() {
        let messages = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"ganger","kind":["bin"]},"executable":"/t/debug/ganger"}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"conformance","kind":["test"]},"executable":"/t/debug/deps/conformance-1a2b"}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
            "\n"
        );
        assert_eq!(
            built_executable(messages),
            Some(PathBuf::from("/t/debug/deps/conformance-1a2b"))
        );
        assert_eq!(built_executable("not json\n"), None);
    }
}

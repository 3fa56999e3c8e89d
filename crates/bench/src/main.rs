//! Helpers for the committed benchmarks:
//!
//! - `ganger-bench fill-store STATE_DB N WORKTREE`: records N finished tasks (one round each)
//!   through the same store API ganger uses, so that `ganger status` can be timed over many
//!   tasks without running N rounds (bench/compare.py);
//! - `ganger-bench scripted-toml AGENT PROGRAM BASE_URL`: prints the `ganger.toml` that points
//!   the agent at a scripted model server, the one `ganger agents doctor` and the tests use
//!   (bench/agents.py).

use ganger_events::{RoundStatus, RoundSummary};
use ganger_store::{NewRound, NewTask, RoundEnd, RoundKind, SqliteStore, Store};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

fn fill(db: &str, count: usize, worktree: &str) -> Result<(), String> {
    let mut store = SqliteStore::open(&PathBuf::from(db)).map_err(|e| e.to_string())?;
    for n in 0..count {
        let slug = format!("task-{n:05}");
        let task = NewTask {
            slug: slug.clone(),
            agent: "opencode".into(),
            model: Some("opencode/deepseek-v4.1-flash-free".into()),
            base: "main".into(),
            base_commit: None,
            branch: format!("agent/{slug}"),
            worktree: PathBuf::from(worktree),
            worktree_made: true,
            owner: "bench".into(),
            keys: BTreeMap::new(),
            timeout_ms: None,
            stall_ms: None,
            permission: ganger_events::Permission::Write,
            sandbox: ganger_events::SandboxKind::Local,
            network: ganger_events::Network::Shared,
            rw: Vec::new(),
            allow: Vec::new(),
            warm: None,
            labels: Vec::new(),
            budget: ganger_store::Budget::default(),
            fleet: None,
        };
        let round = NewRound {
            kind: RoundKind::Start,
            model: task.model.clone(),
            session_before: None,
            commander: "bench".into(),
            token: format!("bench-{n}"),
            claim: ganger_store::ClaimKey::new(format!("/nonexistent/bench-{n}.lock")),
            host: None,
            snapshot_before: None,
            checks: Vec::new(),
            generation: None,
        };
        let (_, round) = store
            .create_task(&task, &round)
            .map_err(|e| e.to_string())?;
        let end = RoundEnd {
            status: RoundStatus::Done,
            snapshot_before: None,
            reason: None,
            session: Some(format!("ses_bench{n:08}")),
            exit_code: Some(0),
            exit_signal: None,
            summary: RoundSummary {
                cost_usd: Some(0.0015),
                ..RoundSummary::default()
            },
            snapshot_after: None,
            changed: vec!["M container/src/fake-worker.txt".into()],
            worktree_changes: vec!["M container/src/fake-worker.txt".into()],
            checks: Vec::new(),
        };
        store
            .finish_round(round.id, &end)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[expect(clippy::print_stdout, reason = "the configuration is the output")]
fn scripted_toml(agent: &str, program: &str, url: &str) -> Result<(), String> {
    let adapter = ganger_agents::adapter(agent).ok_or_else(|| format!("no agent {agent:?}"))?;
    print!(
        "{}",
        ganger_engine::scripted::scripted_toml(
            adapter,
            std::path::Path::new(program),
            url,
            &[],
            "timeout = \"5m\"\nstall = \"2m\"",
            "",
        )
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.as_slice() {
        [_, command, db, count, worktree] if command == "fill-store" => count
            .parse()
            .map_err(|_| format!("{count:?} is not a number"))
            .and_then(|count| fill(db, count, worktree)),
        [_, command, agent, program, url] if command == "scripted-toml" => {
            scripted_toml(agent, program, url)
        }
        _ => Err("usage: ganger-bench fill-store STATE_DB N WORKTREE | scripted-toml AGENT PROGRAM BASE_URL".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            #[expect(clippy::print_stderr, reason = "a command-line tool reports its error")]
            {
                eprintln!("ganger-bench: {message}");
            }
            ExitCode::from(2)
        }
    }
}

//! `ganger agents doctor`: for each installed agent, two rounds against the scripted model in
//! a throwaway repository and a private HOME: the first must finish as done with a session
//! and token figures, the second must resume that session (the model must see the first
//! prompt again). Says per agent what works and what does not.

use super::agents::{chosen, config_here};
use crate::exit;
use crate::printer::Printer;
use crate::{Failure, Outcome, Place};
use ganger_engine::documents::{AgentCheck, Doctor};
use ganger_engine::{Brief, Engine, EngineError, FixOptions, Launched, Sent, StartOptions};
use ganger_fake_llm::{FakeLlm, Script, Turn};
use std::path::Path;
use std::time::Instant;

const FIRST: &str = "Doctor round one: say hello.";
const SECOND: &str = "Doctor round two: say it again.";

fn script() -> Script {
    Script::new()
        .turn(Turn::text("Doctor round 1 answered. {{history}}").when("Doctor round one"))
        .turn(Turn::text("Doctor round 2 answered. {{history}}").when("Doctor round two"))
        .default_answer("ganger doctor")
}

pub(crate) fn run(place: &Place, names: &[String], json: bool) -> Outcome {
    let out = Printer::new(json);
    let config = config_here(place)?;
    let mut checks = Vec::new();
    for adapter in chosen(names)? {
        let Some((program, _)) = ganger_engine::agents::locate(adapter, &config) else {
            if !names.is_empty() {
                checks.push(AgentCheck {
                    name: adapter.name().into(),
                    version: None,
                    result: "not-installed",
                    problem: Some(format!(
                        "not installed: ganger agents install {}",
                        adapter.name()
                    )),
                    seconds: 0.0,
                });
            }
            continue;
        };
        out.progress(&format!("{:<9} ", adapter.name()))?;
        let clock = Instant::now();
        let version = ganger_engine::agents::version_of(adapter, &program);
        let problem = check(adapter, &program).err();
        let result = AgentCheck {
            name: adapter.name().into(),
            version,
            result: if problem.is_none() { "ok" } else { "failed" },
            problem,
            seconds: clock.elapsed().as_secs_f64(),
        };
        {
            out.progress(&format!(
                "{} {} in {:.1} s{}\n",
                result.version.as_deref().unwrap_or("(unknown version)"),
                result.result,
                result.seconds,
                result
                    .problem
                    .as_deref()
                    .map(|p| format!(": {p}"))
                    .unwrap_or_default()
            ))?;
        }
        checks.push(result);
    }
    let all_ok = !checks.is_empty() && checks.iter().all(|c| c.result == "ok");
    let nothing = checks.is_empty();
    // The lines above were the human report, but for an empty one.
    out.print(&Doctor::new(checks), || {
        if nothing {
            "no agent CLI is installed: ganger agents install NAME\n".to_owned()
        } else {
            String::new()
        }
    })?;
    Ok(if all_ok { exit::OK } else { exit::NOT_DONE })
}

/// Two rounds of `adapter` against a scripted model; the error says what failed.
fn check(adapter: &dyn ganger_agents::Adapter, program: &Path) -> Result<(), String> {
    let dir = tempfile::Builder::new()
        .prefix("ganger-doctor-")
        .tempdir()
        .map_err(|e| format!("no temporary directory: {e}"))?;
    let llm = FakeLlm::start(script()).map_err(|e| e.to_string())?;
    let repo = dir.path().join("repo");
    let home = dir.path().join("home");
    make_repo(&repo, &home).map_err(|e| describe_failure(&e))?;
    let home_text = home.to_string_lossy().into_owned();
    let env = vec![
        ("HOME".to_owned(), home_text.clone()),
        ("XDG_CONFIG_HOME".to_owned(), format!("{home_text}/.config")),
        (
            "XDG_DATA_HOME".to_owned(),
            format!("{home_text}/.local/share"),
        ),
        (
            "XDG_STATE_HOME".to_owned(),
            format!("{home_text}/.local/state"),
        ),
        ("XDG_CACHE_HOME".to_owned(), format!("{home_text}/.cache")),
    ];
    let toml = ganger_engine::scripted::scripted_toml(
        adapter,
        program,
        &llm.root_url(),
        &env,
        "timeout = \"3m\"\nstall = \"90s\"",
        "",
    );
    std::fs::write(repo.join("ganger.toml"), toml).map_err(|e| e.to_string())?;
    // The scratch repository's own store: the user's (`--store`) is no place for a check.
    let engine = Engine::open(&repo, None, "doctor").map_err(|e| e.message)?;
    let mut quiet = |_notice| {};
    let first = engine
        .start(
            StartOptions {
                slug: "doctor".into(),
                brief: Some(Brief::Message(FIRST.into())),
                ..StartOptions::default()
            },
            false,
            &mut quiet,
        )
        .map_err(|e| format!("round 1 did not start: {}", e.message))?;
    let (session, tokens) = finished("round 1", first)?;
    let second = engine
        .fix(
            FixOptions {
                slug: "doctor".into(),
                brief: Some(Brief::Message(SECOND.into())),
                ..FixOptions::default()
            },
            false,
            &mut quiet,
        )
        .map_err(|e| format!("round 2 did not start: {}", e.message))?;
    let (resumed, _) = finished("round 2", second)?;
    if resumed != session {
        return Err(format!(
            "round 2 ran in session {resumed}, not round 1's {session}"
        ));
    }
    let carried = llm.requests().iter().rev().any(|request| {
        request.conversation.as_ref().is_some_and(|c| {
            let prompts = c.prompts();
            prompts.iter().any(|p| p.contains("Doctor round one"))
                && prompts.iter().any(|p| p.contains("Doctor round two"))
        })
    });
    if !carried {
        return Err("round 2 did not carry round 1's conversation to the model".into());
    }
    if tokens == 0 {
        return Err("round 1 reported no tokens".into());
    }
    Ok(())
}

/// The session and input tokens of a round that must be done.
fn finished(what: &str, sent: Sent) -> Result<(String, u64), String> {
    let Sent::Launched(Launched::Finished(outcome)) = sent else {
        return Err(format!("{what} was detached or queued"));
    };
    let round = outcome.round;
    if round.status != ganger_events::RoundStatus::Done {
        return Err(format!(
            "{what} ended {}: {}",
            round.status,
            round.reason.as_deref().unwrap_or("no reason given")
        ));
    }
    let session = round
        .session
        .ok_or_else(|| format!("{what} named no session"))?;
    Ok((session, round.summary.tokens.input))
}

fn make_repo(repo: &Path, home: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(home).map_err(|e| EngineError::io("create", home, e))?;
    ganger_engine::scripted::scratch_repository(
        repo,
        "ganger doctor",
        &[("README.md", "# ganger doctor\n")],
    )?;
    Ok(())
}

fn describe_failure(failure: &Failure) -> String {
    match failure {
        Failure::Engine(e) => e.message.clone(),
        Failure::Io(e) => e.to_string(),
    }
}

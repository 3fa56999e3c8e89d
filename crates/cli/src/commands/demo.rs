//! `ganger demo`: on a fresh machine, with no key and no set-up, shows the whole loop in well
//! under a minute: a throwaway repository, the scripted model server, the pinned OpenCode
//! (installed into ganger's cache with npm if missing), a task started whose first round fails
//! the repository's check, the failure sent back by `--until-green` as a fix round in the same
//! session, and the report.

use crate::args::DemoArgs;
use crate::exit;
use crate::printer;
use crate::printer::Printer;
use crate::{Failure, Outcome};
use ganger_engine::{
    Brief, Engine, EngineError, Launched, Sent, StartOptions, StatusRequest, StatusView,
};
use ganger_fake_llm::{FakeLlm, Script, Turn};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

const FIRST: &str = "Create hello.txt with one line greeting the ganger demo.";

/// The demo repository's check: hello.txt needs two lines, which round 1 does not write.
const CHECK: &str = r#"
[[checks]]
name = "two-lines"
command = "n=$(wc -l < hello.txt); test $n -ge 2 || { echo \"hello.txt has $n line; it needs a second line\"; exit 1; }"
timeout = "30s"
"#;

fn script() -> Script {
    Script::new()
        .turn(Turn::tool("write", json!({"filePath": "hello.txt", "content": "Hello from the scripted model.\n"})).when("Create hello.txt"))
        .text("Created hello.txt with a greeting. ({{history}})")
        .turn(
            Turn::tool(
                "write",
                json!({"filePath": "hello.txt", "content": "Hello from the scripted model.\nThis line was added in round 2, in the same session.\n"}),
            )
            .when("second line"),
        )
        .text("Added the second line to hello.txt. ({{history}})")
        .default_answer("ganger demo")
}

/// The demo's `ganger.toml`: OpenCode pointed at the scripted model the way `ganger agents
/// doctor` and the tests point it, with OpenCode's own state in the demo's directory.
fn config(
    adapter: &dyn ganger_agents::Adapter,
    program: &Path,
    root_url: &str,
    state: &Path,
) -> String {
    let env: Vec<(String, String)> = [
        ("XDG_DATA_HOME", "data"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
    ]
    .iter()
    .map(|(key, dir)| {
        (
            (*key).to_owned(),
            state.join(dir).to_string_lossy().into_owned(),
        )
    })
    .collect();
    ganger_engine::scripted::scripted_toml(
        adapter,
        program,
        root_url,
        &env,
        "timeout = \"5m\"\nstall = \"2m\"",
        CHECK,
    )
}

fn say(text: &str) -> Result<(), Failure> {
    printer::emit(&format!("\n== {text}\n"))?;
    Ok(())
}

fn report(engine: &Engine, sent: Sent) -> Result<bool, Failure> {
    match sent {
        Sent::Launched(Launched::Finished(outcome)) => {
            let report = engine.outcome_report(&outcome);
            printer::emit(&printer::report_text(&report))?;
            Ok(outcome.round.status == ganger_events::RoundStatus::Done)
        }
        Sent::Launched(Launched::Detached { .. })
        | Sent::Queued { .. }
        | Sent::Elsewhere { .. } => Ok(false),
    }
}

pub(crate) fn run(args: DemoArgs) -> Outcome {
    let clock = Instant::now();
    let adapter = ganger_agents::adapter("opencode")
        .ok_or_else(|| EngineError::invalid("no OpenCode adapter"))?;
    say(&format!(
        "OpenCode {} (pinned), from ganger's cache",
        adapter.tested_version()
    ))?;
    let program = match ganger_engine::install::cached_program(adapter) {
        Some(program) => program,
        None => {
            printer::emit(&format!(
                "installing {}@{} with npm into {} ...\n",
                adapter.npm_package(),
                adapter.tested_version(),
                ganger_engine::install::cached_install_dir(adapter).display()
            ))?;
            ganger_engine::install::ensure_installed(adapter)?
        }
    };
    printer::emit(&format!("{}\n", program.display()))?;

    let dir = tempfile::Builder::new()
        .prefix("ganger-demo-")
        .tempdir()
        .map_err(|e| EngineError::invalid(format!("failed to make a temporary directory: {e}")))?;
    let llm = FakeLlm::start(script()).map_err(|e| EngineError::invalid(e.to_string()))?;
    say(&format!(
        "a scripted model at {} (no key, no tokens spent)",
        llm.base_url()
    ))?;

    let repo = dir.path().join("demo");
    let toml = config(
        adapter,
        &program,
        &llm.root_url(),
        &dir.path().join("opencode"),
    );
    ganger_engine::scripted::scratch_repository(
        &repo,
        "ganger demo",
        &[
            ("README.md", "# A demo repository\n"),
            ("ganger.toml", &toml),
        ],
    )?;
    say(&format!("a repository at {}", repo.display()))?;

    // The scratch repository's own store: the user's (`--store`) is no place for a demo.
    let engine = Engine::open(&repo, None, "demo")?;
    say(&format!(
        "ganger start hello --message {FIRST:?} --until-green 1   (ganger.toml has a check)"
    ))?;
    let started = engine.start(
        StartOptions {
            slug: "hello".into(),
            brief: Some(Brief::Message(FIRST.into())),
            until_green: Some(1),
            ..StartOptions::default()
        },
        false,
        &mut Printer::new(false).notices(),
    )?;
    let done = report(&engine, started)?;

    say("ganger status")?;
    if let StatusView::List(list) = engine.status(
        &StatusRequest::default(),
        &mut Printer::new(false).notices(),
    )? {
        printer::emit(&printer::task_table(&list, engine.workspace().state.root()))?;
    }
    say("ganger diff hello")?;
    let diff = engine.diff("hello", false, false)?;
    printer::emit(&String::from_utf8_lossy(&diff))?;

    let requests = llm.requests();
    say(&format!(
        "the model received {} requests; the last one carried {} messages of the same conversation",
        requests.len(),
        requests
            .last()
            .and_then(|r| r.body.as_ref())
            .and_then(|body| body.get("messages"))
            .and_then(|m| m.as_array())
            .map_or(0, Vec::len)
    ))?;
    // OpenCode's rounds ran warm: its agent must not outlive the demo's scripted model.
    let _ = engine.stop_warm(&[], true);
    let kept = if args.keep {
        let path = dir.keep();
        format!(
            "the demo repository is kept at {}",
            path.join("demo").display()
        )
    } else {
        "the demo repository was removed (--keep keeps it)".to_owned()
    };
    printer::emit(&format!(
        "\ndone in {:.1} s; {kept}\nyour turn: ganger init, then ganger start SLUG --message TEXT in your repository\n",
        clock.elapsed().as_secs_f64()
    ))?;
    Ok(if done { exit::OK } else { exit::NOT_DONE })
}

//! Scenarios beyond the per-agent suite: the `command` agent (a configured CLI reading a known
//! stream format, with a session minted up front; a plain-text one), and `ganger agents`
//! (`install` from npm into a fresh cache, `doctor` against the scripted model).

use ganger_fake_llm::{FakeLlm, Script, Turn};
use ganger_test_support::{World, agent_program};
use serde_json::json;

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Claude Code driven as a `command` agent: `{session}` in the template makes ganger name the
/// session up front (`--session-id`), the stream is read as Claude's, and the fix resumes it.
pub fn command_agent_with_a_known_format() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let worktree = world.worktree("cmd");
    let llm = FakeLlm::start(
        Script::new()
            .turn(
                Turn::tool(
                    "Write",
                    json!({"file_path": worktree.join("made.txt"), "content": "made\n"}),
                )
                .when("first"),
            )
            .text("Done first. {{history}}")
            .turn(Turn::text("Done second. {{history}}").when("second"))
            .default_answer("side"),
    )
    .unwrap();
    let claude = agent_program("claude");
    world.write(
        "ganger.toml",
        &format!(
            r#"[defaults]
agent = "command"
model = "claude-fake"
timeout = "120s"
stall = "30s"

[agents.command]
argv = [{claude}, "-p", "--output-format", "stream-json", "--verbose", "--model", "{{model}}", "--permission-mode", "acceptEdits", "--session-id", "{{session}}"]
resume_argv = [{claude}, "-p", "--output-format", "stream-json", "--verbose", "--model", "{{model}}", "--resume", "{{session}}"]
prompt = "stdin"
format = "claude"
env = {{ ANTHROPIC_BASE_URL = {url}, ANTHROPIC_API_KEY = "scripted", DISABLE_AUTOUPDATER = "1", CLAUDE_CODE_MAX_RETRIES = "1" }}
"#,
            claude = quoted(&claude.to_string_lossy()),
            url = quoted(&llm.root_url()),
        ),
    );
    let first = world
        .ganger(&["start", "cmd", "--message", "the first round", "--json"])
        .json();
    assert_eq!(first["status"], "done", "{first:#}");
    assert_eq!(first["agent"], "command");
    let session = first["session"].as_str().unwrap().to_owned();
    assert_eq!(session.len(), 36, "a UUID named up front: {session}");
    assert!(worktree.join("made.txt").is_file());
    let second = world
        .ganger(&["fix", "cmd", "--message", "the second round", "--json"])
        .json();
    assert_eq!(second["status"], "done", "{second:#}");
    assert_eq!(second["session"], session.as_str());
    assert!(
        second["answer"].as_str().unwrap().contains("Done second"),
        "{second:#}"
    );
}

/// A plain-text `command` agent: the prompt in argv, the last line is the answer, and a
/// non-zero exit fails the round.
pub fn command_agent_plain_text() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        r#"[defaults]
agent = "command"

[agents.command]
argv = ["/bin/sh", "-c", "printf '%s\n' \"$1\" > asked.txt; echo working; case \"$1\" in *fail*) echo broken; exit 3;; esac; echo \"answered: $1\"", "agent", "{prompt}"]
prompt = "argv"
format = "text"
"#,
    );
    let done = world
        .ganger(&[
            "start",
            "txt",
            "--message",
            "-a prompt with a dash",
            "--json",
        ])
        .json();
    assert_eq!(done["status"], "done", "{done:#}");
    assert_eq!(done["answer"], "answered: -a prompt with a dash");
    assert_eq!(
        std::fs::read_to_string(world.worktree("txt").join("asked.txt")).unwrap(),
        "-a prompt with a dash\n"
    );
    let failed = world
        .ganger(&["fix", "txt", "--message", "now fail", "--json"])
        .json();
    assert_eq!(failed["status"], "failed", "{failed:#}");
    assert!(
        failed["reason"]
            .as_str()
            .unwrap()
            .contains("exited with code 3"),
        "{failed:#}"
    );
}

/// `ganger agents install` puts the tested version in a fresh cache with npm, and `ganger
/// agents` then lists it as the tested one from the cache.
pub fn agents_install_into_the_cache() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let mut install = world.command(&["agents", "install", "qwen", "--json"]);
    let home = world.home.to_string_lossy().into_owned();
    install.env("npm_config_cache", format!("{home}/.npm"));
    // The one test that reaches the npm registry (its subject is the install): a world's
    // processes are otherwise offline (`World::env`).
    install.env_remove("npm_config_offline");
    let output = install.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let installed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        installed["installed"][0]["version"],
        ganger_agents::adapter("qwen").unwrap().tested_version()
    );
    let path = installed["installed"][0]["path"].as_str().unwrap();
    assert!(
        path.starts_with(&home),
        "{path} is not in the world's cache"
    );
    let listed = world.ganger(&["agents", "--json"]).json();
    let qwen = listed["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "qwen")
        .unwrap()
        .clone();
    assert_eq!(qwen["source"], "cache", "{qwen:#}");
    assert_eq!(qwen["tested"], true, "{qwen:#}");
    let unknown = world.ganger(&["agents", "install", "nope"]);
    unknown.expect_code(2);
    assert!(
        unknown.stderr.contains("unknown agent \"nope\""),
        "{}",
        unknown.stderr
    );
}

/// `ganger agents doctor` runs two rounds of an agent against the scripted model and says it
/// works; an agent that cannot start is reported as failed.
pub fn agents_doctor_checks_an_agent() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let claude = agent_program("claude");
    world.write(
        "ganger.toml",
        &format!(
            "[agents.claude]\ncommand = {}\n\n[agents.codex]\ncommand = \"/bin/false\"\n",
            quoted(&claude.to_string_lossy())
        ),
    );
    let run = world.ganger(&["agents", "doctor", "claude", "codex", "--json"]);
    let report = run.json();
    let agents = report["agents"].as_array().unwrap();
    assert_eq!(agents[0]["name"], "claude");
    assert_eq!(agents[0]["result"], "ok", "{report:#}\n{}", run.stderr);
    assert_eq!(agents[1]["name"], "codex");
    assert_eq!(agents[1]["result"], "failed", "{report:#}");
    run.expect_code(1);
}

/// A stand-in `npm`: `view` names 9.9.9 the newest release; `install --prefix DIR PKG@V`
/// makes `DIR/node_modules/.bin/claude` print V as its version, and logs the install.
const FAKE_NPM: &str = r#"#!/bin/sh
case "$1" in
view) echo 9.9.9 ;;
install)
  while [ $# -gt 0 ]; do
    case "$1" in --prefix) dir=$2; shift ;; *@*) spec=$1 ;; esac
    shift
  done
  mkdir -p "$dir/node_modules/.bin"
  printf '#!/bin/sh\necho "%s (Claude Code)"\n' "${spec##*@}" > "$dir/node_modules/.bin/claude"
  chmod +x "$dir/node_modules/.bin/claude"
  echo "$spec $dir" >> "$CANARY_NPM_LOG" ;;
*) exit 3 ;;
esac
"#;

/// A stand-in conformance binary, speaking libtest's `--list` and `--exact`: its
/// `claude::http_401_fails` fails for version 9.9.9 of the program `GANGER_TEST_CLAUDE` names.
const FAKE_SUITE: &str = r#"#!/bin/sh
if [ "$1" = --list ]; then
  printf 'agents_command::doctor: test\nclaude::http_401_fails: test\nclaude::writes_a_file: test\nqwen::writes_a_file: test\n'
  exit 0
fi
name=$2
version=$("$GANGER_TEST_CLAUDE" --version | cut -d' ' -f1)
echo "running 1 test"
if [ "$name" = claude::http_401_fails ] && [ "$version" = 9.9.9 ]; then
  echo "test $name ... FAILED"
  echo "thread '$name' (7) panicked at crates/cli/tests/conformance/scenarios.rs:188:5:"
  echo 'none of ["401"] in the reason: {'
  echo '  "reason": "Claude Code reported an error: the result line gave no details",'
  echo '}'
  echo "note: run with RUST_BACKTRACE=1"
  exit 101
fi
echo "test $name ... ok"
"#;

fn executable(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `ganger agents canary` runs the developer tool `ganger-dev canary`, found beside `ganger`:
/// a workspace build makes both; when this suite was built alone, it is built here.
fn dev_tool_beside_ganger() {
    let ganger = std::path::Path::new(env!("CARGO_BIN_EXE_ganger"));
    if ganger.with_file_name("ganger-dev").is_file() {
        return;
    }
    // TARGET/debug/ganger: the same target directory, so that cargo puts it beside ganger.
    let target = ganger.parent().and_then(|p| p.parent()).unwrap();
    let built = std::process::Command::new(env!("CARGO"))
        .args(["build", "--quiet", "-p", "ganger-dev"])
        .env("CARGO_TARGET_DIR", target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(built.success(), "cargo could not build ganger-dev");
    assert!(ganger.with_file_name("ganger-dev").is_file());
}

/// `ganger agents canary` installs the newest release into a scratch cache (not ganger's
/// cache of pinned agents), runs every scenario of the suite on it and on the pinned version
/// with `GANGER_TEST_<AGENT>` naming each, and reports both; a failing newest version is exit
/// 1 with the scenario and why. Stand-ins for npm and the suite make it fast and offline.
pub fn canary_compares_the_newest_release_with_the_pinned_one() {
    dev_tool_beside_ganger();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let bin = world.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    executable(&bin.join("npm"), FAKE_NPM);
    let suite = world.root().join("conformance-suite");
    executable(&suite, FAKE_SUITE);
    let npm_log = world.root().join("npm.log");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let canary = |args: &[&str]| {
        let mut command = world.command(args);
        command.env("PATH", &path).env("CANARY_NPM_LOG", &npm_log);
        ganger_test_support::Run::from(command.output().unwrap())
    };
    let suite_arg = suite.to_string_lossy().into_owned();
    let pinned = ganger_agents::adapter("claude").unwrap().tested_version();

    let run = canary(&[
        "agents", "canary", "claude", "--suite", &suite_arg, "--json",
    ]);
    run.expect_code(1);
    let report = run.json();
    assert_eq!(report["schema"], "ganger.agents-canary/1");
    let claude = &report["agents"][0];
    assert_eq!(claude["name"], "claude");
    assert_eq!(claude["pinned"], pinned);
    assert_eq!(claude["newest"], "9.9.9");
    assert_eq!(claude["newest_passes"], false);
    let results: Vec<(String, String, String)> = claude["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["pinned"]["result"].as_str().unwrap().to_owned(),
                s["newest"]["result"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let result =
        |name: &str, old: &str, new: &str| (name.to_owned(), old.to_owned(), new.to_owned());
    assert_eq!(
        results,
        vec![
            result("http_401_fails", "pass", "fail"),
            result("writes_a_file", "pass", "pass"),
        ]
    );
    assert_eq!(
        claude["scenarios"][0]["newest"]["why"],
        "none of [\"401\"] in the reason; the round's reason: Claude Code reported an error: the result line gave no details"
    );
    // The report is kept for scripts/move-pins.
    let kept: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(world.home.join(".cache/ganger/canary/last-report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(kept, report);
    let log = claude["scenarios"][0]["newest"]["log"].as_str().unwrap();
    assert!(
        std::fs::read_to_string(log)
            .unwrap()
            .contains("panicked at"),
        "{log}"
    );
    // Both versions went into the canary's own cache; ganger's cache of pinned agents was
    // not touched.
    let cache = world.home.join(".cache/ganger");
    let installs = std::fs::read_to_string(&npm_log).unwrap();
    assert_eq!(
        installs,
        format!(
            "@anthropic-ai/claude-code@{pinned} {}\n@anthropic-ai/claude-code@9.9.9 {}\n",
            cache.join(format!("canary/claude-{pinned}")).display(),
            cache.join("canary/claude-9.9.9").display()
        )
    );
    assert!(!cache.join("agents").exists());

    // As text: the table and the conclusion; the scratch installs are used again.
    let run = canary(&["agents", "canary", "claude", "--suite", &suite_arg]);
    run.expect_code(1);
    assert!(run.stdout.starts_with("agent   pinned"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "claude: 9.9.9 fails 1 of 2 scenarios; the pin stays at {pinned}:\n  http_401_fails: fail (none of"
        )),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read_to_string(&npm_log).unwrap(), installs);

    // Bad input: exit 2, one line, nothing run.
    for (args, message) in [
        (
            vec!["agents", "canary", "nope", "--suite", &suite_arg],
            "unknown agent \"nope\"",
        ),
        (
            vec!["agents", "canary", "claude"],
            "is not in a ganger source tree",
        ),
        (
            vec!["agents", "canary", "claude", "--suite", "no-such-suite"],
            "no conformance test binary at",
        ),
    ] {
        let run = canary(&args);
        run.expect_code(2);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
    }
}

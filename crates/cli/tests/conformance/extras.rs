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
    let output = install.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let installed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(installed["installed"][0]["version"], "0.15.10");
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

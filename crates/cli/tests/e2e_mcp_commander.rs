//! End to end: a real agent CLI (Claude Code, OpenCode, Codex, Gemini CLI) supervises through `ganger mcp`, registered by `ganger init
//! --supervisor AGENT`, and a real Claude Code works (the worker's agent is not this test's
//! subject, and Claude Code starts in a fraction of OpenCode's CPU time). Two scripted model
//! servers: the commander's script makes it call ganger's tools (start a task, wait, read the
//! report and the diff, send a fix, wait, merge); the worker's script writes one file per
//! round. What the commander's model was sent shows its tool calls and their results; what the
//! worker's was sent shows the second round continuing the first one's session.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_fake_llm::{FakeLlm, RecordedRequest, Script, Turn};
use ganger_test_support::{World, agent_program, agent_toml};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const SLUG: &str = "greet";
const FIRST: &str = "Write the first file, round1.txt. End with a line DONE: <what you did>.";
const SECOND: &str = "Now the second file, round2.txt.";

/// The worker (Claude Code, whose file tool takes an absolute path): one file per round in
/// the task's worktree `worktree`, and a `DONE:` line.
fn worker_script(worktree: &Path) -> Script {
    let write = |name: &str, content: &str| {
        Turn::tool(
            "Write",
            json!({"file_path": worktree.join(name), "content": content}),
        )
    };
    Script::new()
        .turn(write("round1.txt", "round 1\n").when("first file"))
        .text("Wrote round1.txt. {{history}}\nDONE: round1.txt written")
        .turn(write("round2.txt", "round 2\n").when("second file"))
        .text("Wrote round2.txt. {{history}}\nDONE: round2.txt written")
}

/// The commander: the supervise loop, one tool call per turn, its tools named as the agent
/// offers them (`prefix` + the tool's name).
fn commander_script(prefix: &str) -> Script {
    let tool = |name: &str| format!("{prefix}{name}");
    Script::new()
        .turn(
            Turn::tool(
                tool("start"),
                json!({"slug": SLUG, "brief": FIRST, "agent": "claude"}),
            )
            .when("(?i)supervise"),
        )
        .tool(tool("wait"), json!({"slug": SLUG, "timeout_seconds": 300}))
        .tool(tool("report"), json!({"slug": SLUG}))
        .tool(tool("diff"), json!({"slug": SLUG}))
        .tool(tool("fix"), json!({"slug": SLUG, "brief": SECOND}))
        .tool(tool("wait"), json!({"slug": SLUG, "timeout_seconds": 300}))
        .tool(tool("merge"), json!({"slug": SLUG}))
        .text("Merged the task. {{history}}")
}

/// The tool calls of the commander's last request, in order, and each call's result.
pub(crate) fn calls_and_results(requests: &[RecordedRequest]) -> (Vec<String>, Vec<String>) {
    let last = requests
        .iter()
        .filter(|r| r.tools_offered)
        .filter_map(|r| r.conversation.as_ref())
        .max_by_key(|c| c.messages.len())
        .expect("the commander's model was asked");
    let calls = last
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().cloned())
        .collect();
    let results = last
        .messages
        .iter()
        .filter(|m| m.role == ganger_fake_llm::Role::Tool)
        .map(|m| m.text.clone())
        .collect();
    (calls, results)
}

/// The world: Claude Code pointed at the worker's scripted model (started here, as its script
/// names the task's worktree), the supervisor registered, everything committed (a merge needs
/// a clean main checkout).
fn world(supervisor: &str) -> (World, FakeLlm) {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let worker = FakeLlm::start(worker_script(&world.worktree(SLUG))).unwrap();
    world.write(
        "ganger.toml",
        &agent_toml("claude", &worker.root_url(), "", ""),
    );
    let init = world.ganger(&["init", "--supervisor", supervisor, "--json"]);
    init.expect_code(0);
    let files: Vec<String> = init.json()["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["change"].as_str().unwrap(),
                f["path"].as_str().unwrap()
            )
        })
        .collect();
    assert!(files.iter().all(|f| f.starts_with("created ")), "{files:?}");
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "ganger and its supervisor"]);
    (world, worker)
}

/// What the commander did, checked from both models' requests and from git.
fn check_the_loop(world: &World, commander: &FakeLlm, worker: &FakeLlm, prefix: &str, owner: &str) {
    let (calls, results) = calls_and_results(&commander.requests());
    let expected: Vec<String> = ["start", "wait", "report", "diff", "fix", "wait", "merge"]
        .iter()
        .map(|t| format!("{prefix}{t}"))
        .collect();
    assert_eq!(calls, expected);
    assert_eq!(results.len(), 7, "{results:#?}");
    // Each result is ganger's answer (the agent may hand its model the text or the JSON).
    let said = |i: usize, needle: &str| {
        assert!(
            results[i].contains(needle),
            "result {i} ({}) lacks {needle:?}: {}",
            expected[i],
            results[i]
        );
    };
    said(0, "running");
    said(1, "done");
    said(1, "DONE: round1.txt written");
    said(2, "round1.txt");
    said(3, "+round 1");
    said(4, "running");
    said(5, "DONE: round2.txt written");
    said(6, "merged");

    // The worker's second round continued its first session.
    let requests = worker.requests();
    let round2 = requests
        .iter()
        .filter(|r| r.tools_offered)
        .filter_map(|r| r.conversation.as_ref())
        .find(|c| c.prompts().len() == 2)
        .expect("a worker request with both prompts");
    assert_eq!(round2.prompts(), [FIRST, SECOND]);

    // The task was the commander's, its two rounds one session, its work merged into main.
    let status = world.ganger(&["status", SLUG, "--json"]);
    let report: Value = status.json();
    assert_eq!(report["owner"], owner, "{report:#}");
    assert_eq!(report["round"], 2);
    assert_eq!(world.git(&["show", "main:round1.txt"]), "round 1");
    assert_eq!(world.git(&["show", "main:round2.txt"]), "round 2");
}

/// Claude Code as a commander in `world` (its `ganger mcp` registered there), its model at
/// `model_url`, given `prompt` headless.
pub(crate) fn claude_commander(world: &World, model_url: &str, prompt: &str) -> Command {
    let mut claude = Command::new(agent_program("claude"));
    world.env(&mut claude);
    claude
        .current_dir(&world.repo)
        .env("ANTHROPIC_BASE_URL", model_url)
        .env("ANTHROPIC_API_KEY", "not-a-key")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        // The tools from the first request on, not behind tool search (docs/agents).
        .env("MCP_CONNECTION_NONBLOCKING", "0")
        .env("ENABLE_TOOL_SEARCH", "false")
        // A workspace never opened interactively is not trusted: its allow rules are ignored.
        .args([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-fake",
            "--allowedTools=mcp__ganger",
            prompt,
        ])
        .stdin(std::process::Stdio::null());
    claude
}

#[test]
fn claude_code_supervises_a_claude_code_worker_through_the_mcp_server() {
    let commander = FakeLlm::start(commander_script("mcp__ganger__")).unwrap();
    let (world, worker) = world("claude");
    let mut claude = claude_commander(
        &world,
        &commander.root_url(),
        "Please supervise this: one task, then merge it.",
    );
    let out = claude.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "claude: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let last: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(
        last["result"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Merged the task."),
        "{last:#}"
    );
    check_the_loop(&world, &commander, &worker, "mcp__ganger__", "claude-code");
}

/// The last text an OpenCode run printed (`--format json`).
fn opencode_answer(stdout: &str) -> String {
    stdout
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "text")
        .find_map(|event| event["part"]["text"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[test]
fn opencode_supervises_a_claude_code_worker_through_the_mcp_server() {
    let commander = FakeLlm::start(commander_script("ganger_")).unwrap();
    let (world, worker) = world("opencode");
    // The commander's own model, beside the project's opencode.json that registers ganger.
    let config = json!({
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": commander.base_url(), "apiKey": "not-a-key"},
            "models": {"scripted": {"limit": {"context": 128000, "output": 8192}}},
        }},
        "model": "mock/scripted",
        "small_model": "mock/scripted",
        "autoupdate": false,
        "share": "disabled",
    });
    let mut opencode = Command::new(agent_program("opencode"));
    world.env(&mut opencode);
    opencode
        .current_dir(&world.repo)
        .env("PWD", &world.repo)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_CONFIG_CONTENT", config.to_string())
        .args(["run", "--format", "json", "-m", "mock/scripted"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    #[expect(
        clippy::disallowed_methods,
        reason = "the commander's prompt goes on its stdin, as OpenCode reads it best"
    )]
    let mut child = opencode.spawn().unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"Please supervise this: one task, then merge it.")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "opencode: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let answer = opencode_answer(&stdout);
    assert!(answer.starts_with("Merged the task."), "{stdout}");
    check_the_loop(&world, &commander, &worker, "ganger_", "opencode");
}

#[test]
fn codex_supervises_a_claude_code_worker_through_the_mcp_server() {
    let commander = FakeLlm::start(commander_script("mcp__ganger__")).unwrap();
    let (world, worker) = world("codex");
    // The commander's own provider; the project's .codex/config.toml (registering ganger) is
    // read only in a trusted project, as `codex exec --trust` records it.
    let codex_home = world.root().join("codex-home");
    let tmp = world.root().join("codex-tmp");
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let repo = world.repo.canonicalize().unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            r#"model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.fake]
name = "Fake"
base_url = {base}
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 1
stream_max_retries = 1

[projects.{repo}]
trust_level = "trusted"
"#,
            base = json!(commander.base_url()),
            repo = json!(repo.to_string_lossy()),
        ),
    )
    .unwrap();
    let mut codex = Command::new(agent_program("codex"));
    world.env(&mut codex);
    codex
        .current_dir(&world.repo)
        .env("CODEX_HOME", &codex_home)
        .env("TMPDIR", &tmp)
        .env("FAKE_API_KEY", "not-a-key")
        // A model Codex has no metadata for: the MCP tools come as one namespace rather than
        // behind tool search, which a scripted model cannot drive (docs/agents).
        .args([
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-m",
            "gpt-fake",
            "Please supervise this: one task, then merge it.",
        ])
        .stdin(std::process::Stdio::null());
    let out = codex.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "codex: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let answer = stdout
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|event| {
            (event["item"]["type"] == "agent_message").then(|| {
                event["item"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
        })
        .unwrap_or_default();
    assert!(answer.starts_with("Merged the task."), "{stdout}");
    check_the_loop(
        &world,
        &commander,
        &worker,
        "mcp__ganger__",
        "codex-mcp-client",
    );
}

#[test]
fn gemini_cli_supervises_a_claude_code_worker_through_the_mcp_server() {
    // Gemini CLI's side requests (is the next speaker the user?) want JSON.
    let commander = FakeLlm::start(
        commander_script("mcp_ganger_")
            .default_answer(r#"{"reasoning": "the task is merged", "next_speaker": "user"}"#),
    )
    .unwrap();
    let (world, worker) = world("gemini");
    // Gemini CLI starts MCP servers with a filtered environment that keeps no GIT_* variable:
    // the identity the merge commits with comes from the repository (docs/agents).
    world.git(&["config", "user.name", "Test"]);
    world.git(&["config", "user.email", "test@example.invalid"]);
    // The API key's auth type, and the repository trusted: Gemini CLI starts a project's MCP
    // servers only in a trusted folder (docs/agents).
    let settings = world.home.join(".gemini");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("settings.json"),
        json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "general": {"disableAutoUpdate": true},
            "telemetry": {"enabled": false},
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        settings.join("trustedFolders.json"),
        json!({world.repo.to_string_lossy(): "TRUST_FOLDER"}).to_string(),
    )
    .unwrap();
    let mut gemini = Command::new(agent_program("gemini"));
    world.env(&mut gemini);
    gemini
        .current_dir(&world.repo)
        .env("GEMINI_API_KEY", "not-a-key")
        .env("GOOGLE_GEMINI_BASE_URL", commander.root_url())
        .args([
            "-p",
            "Please supervise this: one task, then merge it.",
            "--output-format",
            "stream-json",
            "-m",
            "gemini-fake",
            "--approval-mode",
            "yolo",
        ])
        .stdin(std::process::Stdio::null());
    let out = gemini.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "gemini: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let said: String = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "message" && event["role"] == "assistant")
        .filter_map(|event| event["content"].as_str().map(str::to_owned))
        .collect();
    assert!(said.contains("Merged the task."), "{stdout}");
    check_the_loop(
        &world,
        &commander,
        &worker,
        "mcp_ganger_",
        "gemini-cli-mcp-client",
    );
}

//! The model gateway with each of the five real agents against the scripted model
//! (docs/gateway.md): a round given `--key` runs its agent with a placeholder and the
//! gateway's URL. The agent's shell dumps its environment, every process environment it can
//! read and its home; the real key is in none of it (the model, which sees the tool's output,
//! would), while every model request reached the model with the real key. The gateway's count
//! of tokens is the model's own, and the agent's.

use ganger_fake_llm::{FakeLlm, RecordedRequest, Reply, Script, Turn};
use ganger_test_support::{World, agent_toml};
use serde_json::{Value, json};

const SECRET: &str = "sk-gateway-test-7d1e4c2a-real-key";

/// The provider a `--key` names for each agent, and the `[keys]` line when its variable is
/// not `<PROVIDER>_API_KEY`.
fn provider(agent: &str) -> (&'static str, &'static str) {
    match agent {
        "claude" => ("anthropic", ""),
        "gemini" => ("gemini", ""),
        "qwen" => ("openai", ""),
        "codex" => ("scripted", "[keys]\nscripted = \"SCRIPTED_MODEL_KEY\"\n"),
        "opencode" => ("mock", ""),
        other => panic!("no provider for {other}"),
    }
}

fn shell(agent: &str, command: &str) -> Turn {
    match agent {
        "opencode" => Turn::tool("bash", json!({"command": command, "description": "look"})),
        "claude" => Turn::tool("Bash", json!({"command": command})),
        "codex" => Turn::tool("exec_command", json!({"cmd": command})),
        _ => Turn::tool(
            "run_shell_command",
            json!({"command": command, "description": "look"}),
        ),
    }
}

/// Everything a curious agent can read of its own environment, other processes' and its home.
/// Only what matches a key, a placeholder or a key variable is printed, so that an agent's cap
/// on a tool's output does not cut it.
const DUMP: &str = "{ env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < \"$f\"; done; \
    grep -r -I -h -o -e 'ganger-placeholder-[0-9a-f]*' -e 'sk-gateway[-a-z0-9]*' \"$HOME\"; } 2>/dev/null \
    | grep -o -e 'ganger-placeholder-[0-9a-f]*' -e 'sk-gateway[-a-z0-9]*' | sort -u; echo DUMP''ED";

/// Where a request carried its key: its headers and query, as text.
fn key_places(request: &RecordedRequest) -> String {
    format!("{:?} {:?}", request.headers, request.query)
}

fn body_text(request: &RecordedRequest) -> String {
    request
        .body
        .as_ref()
        .map(Value::to_string)
        .or_else(|| request.body_text.clone())
        .unwrap_or_default()
}

/// The input and output tokens the model reported for `requests`.
fn model_tokens(requests: &[&RecordedRequest]) -> (u64, u64) {
    let (mut input, mut output) = (0, 0);
    for request in requests {
        if let Reply::Answer { usage, .. } = &request.reply {
            input += usage.input;
            output += usage.output;
        }
    }
    (input, output)
}

/// The gateway's tally of a round is the model's count of its requests.
fn assert_counted(agent: &str, tally: &Value, requests: &[&RecordedRequest]) {
    let (input, output) = model_tokens(requests);
    assert_eq!(tally["requests"], requests.len(), "{agent}: {tally}");
    assert_eq!(tally["input_tokens"], input, "{agent}: {tally}");
    assert_eq!(tally["output_tokens"], output, "{agent}: {tally}");
}

fn the_key_stays_at_the_gateway(agent: &'static str) {
    the_key_stays_at_the_gateway_of(agent, false);
}

/// The round cold (`warm` false), or delivered to the agent kept warm, whose gateway lives
/// with its warm host: its tally is not in the round's report yet (docs/gateway.md).
fn the_key_stays_at_the_gateway_of(agent: &'static str, warm: bool) {
    let script = Script::new()
        .turn(shell(agent, DUMP))
        .text("DONE: looked around")
        .text("DONE: looked again");
    let llm = FakeLlm::start(script).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let (provider, keys) = provider(agent);
    let extra = format!("{keys}\n[warm]\ndefault = {warm}\n");
    world.write(
        "ganger.toml",
        &agent_toml(agent, &llm.root_url(), "timeout = \"4m\"", &extra),
    );
    let key_file = world.root().join("provider.key");
    std::fs::write(&key_file, format!("{SECRET}\n")).unwrap();
    let key = format!("{provider}={}", key_file.display());
    let run = world.ganger(&[
        "start",
        "g",
        "--message",
        "look around",
        "--key",
        &key,
        "--json",
    ]);
    run.expect_code(0);

    let requests = llm.requests();
    let model: Vec<_> = requests.iter().filter(|r| r.protocol.is_some()).collect();
    assert!(!model.is_empty(), "{agent}: no model request");
    for request in &model {
        assert!(
            key_places(request).contains(SECRET),
            "{agent}: request {} reached the model without the real key: {}",
            request.index,
            key_places(request)
        );
    }
    // The shell's output went back to the model: it holds the placeholder, not the key.
    let bodies: String = model.iter().map(|r| body_text(r)).collect();
    assert!(bodies.contains("DUMPED"), "{agent}: the dump never ran");
    assert!(
        bodies.contains("ganger-placeholder-"),
        "{agent}: the agent's environment has no placeholder"
    );
    assert!(
        !bodies.contains(SECRET),
        "{agent}: the agent could read the real key"
    );
    for (path, bytes) in world.everything_written() {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SECRET),
            "{agent}: the key is in {}",
            path.display()
        );
    }

    let report = world.ganger(&["status", "g", "--json"]).json();
    let human = world.ganger(&["status", "g"]).stdout;
    // A fix continues the session through the gateway, its key still held there.
    let fix = world.ganger(&["fix", "g", "--message", "look again", "--json"]);
    fix.expect_code(0);
    assert_eq!(fix.json()["done"], "DONE: looked again", "{agent}");
    let after = llm.requests();
    assert!(
        after.len() > requests.len(),
        "{agent}: the fix sent nothing"
    );
    for request in after
        .iter()
        .skip(requests.len())
        .filter(|r| r.protocol.is_some())
    {
        assert!(
            key_places(request).contains(SECRET),
            "{agent}: fix request {}",
            request.index
        );
        assert!(!body_text(request).contains(SECRET), "{agent}");
    }
    // The gateway counted every request and the tokens the model reported, each round its own
    // (a warm agent's gateway lives with its warm host and tells each turn its share).
    let fixed: Vec<&RecordedRequest> = after
        .iter()
        .skip(requests.len())
        .filter(|r| r.protocol.is_some())
        .collect();
    let fix_report = world.ganger(&["status", "g", "--json"]).json();
    assert_counted(agent, &report["gateway"], &model);
    assert_counted(agent, &fix_report["gateway"], &fixed);
    if warm {
        let stream = std::fs::read_to_string(world.repo.join(".ganger/tasks/g/round-2.jsonl"));
        assert!(
            stream.unwrap().contains(r#""ganger":"turn""#),
            "{agent}: not warm"
        );
        // The warm host's gateway logs each turn's requests in its round's gateway stream.
        let logged = world
            .ganger(&["log", "g", "--round", "2", "--gateway"])
            .stdout;
        let forwarded = logged
            .lines()
            .filter(|l| l.contains(r#""refused":null"#))
            .count();
        assert_eq!(forwarded, fixed.len(), "{agent}: {logged}");
        world.ganger(&["warm", "stop", "--all"]).expect_code(0);
        return;
    }
    let (input, output) = model_tokens(&model);
    // Each request is in the round's gateway log, with its status, model and tokens.
    let log = world.ganger(&["log", "g", "--round", "1", "--gateway"]);
    log.expect_code(0);
    assert!(!log.stdout.contains(SECRET) && !log.stdout.contains("ganger-placeholder-"));
    let lines: Vec<Value> = log
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let forwarded: Vec<&Value> = lines.iter().filter(|l| l["refused"].is_null()).collect();
    assert_eq!(forwarded.len(), model.len(), "{agent}: {}", log.stdout);
    let logged = |field: &str| -> u64 {
        forwarded
            .iter()
            .map(|l| l["tokens"][field].as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        (logged("input"), logged("output")),
        (input, output),
        "{agent}"
    );
    let upstream = llm.root_url().trim_start_matches("http://").to_owned();
    for line in &forwarded {
        assert_eq!(line["status"], 200, "{agent}: {line}");
        assert_eq!(line["host"], upstream.as_str(), "{agent}: {line}");
        assert_eq!(line["round"], "g#1", "{agent}: {line}");
        assert!(line["at"].as_i64().unwrap() > 0 && line["total_ms"].is_number());
    }
    // ...and the agent's own figures agree with it in these rounds (no side requests).
    assert_eq!(report["tokens"]["input"], input, "{agent}");
    assert_eq!(report["tokens"]["output"], output, "{agent}");
    assert!(
        human.contains(&format!("gateway: {} model requests\n", model.len())),
        "{agent}: {human}"
    );
}

#[test]
fn opencode_holds_only_a_placeholder() {
    the_key_stays_at_the_gateway("opencode");
}

#[test]
fn opencode_kept_warm_holds_only_a_placeholder() {
    the_key_stays_at_the_gateway_of("opencode", true);
}

#[test]
fn claude_kept_warm_holds_only_a_placeholder() {
    the_key_stays_at_the_gateway_of("claude", true);
}

#[test]
fn claude_holds_only_a_placeholder() {
    the_key_stays_at_the_gateway("claude");
}

#[test]
fn codex_holds_only_a_placeholder() {
    the_key_stays_at_the_gateway("codex");
}

#[test]
fn gemini_holds_only_a_placeholder() {
    the_key_stays_at_the_gateway("gemini");
}

#[test]
fn qwen_holds_only_a_placeholder() {
    the_key_stays_at_the_gateway("qwen");
}

#[test]
fn settings_the_gateway_cannot_use_are_refused_before_anything_is_made() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let key_file = world.root().join("anthropic.key");
    std::fs::write(&key_file, format!("{SECRET}\n")).unwrap();
    let key = format!("anthropic={}", key_file.display());
    let refused = |toml: String, says: &str| {
        world.write("ganger.toml", &toml);
        let run = world.ganger(&["start", "g", "--message", "x", "--key", &key]);
        run.expect_code(2);
        assert!(run.stderr.contains(says), "{}", run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
        assert!(!run.stderr.contains(SECRET));
        assert!(!world.worktree("g").exists(), "a worktree was made");
        let listed = world.ganger(&["status", "--json"]).json();
        assert_eq!(
            listed["tasks"].as_array().map(Vec::len),
            Some(0),
            "{listed}"
        );
    };
    std::fs::write(world.repo.join("ca.pem"), "not a certificate\n").unwrap();
    refused(
        agent_toml(
            "claude",
            "http://127.0.0.1:9",
            "",
            "\n[gateway]\nca = \"ca.pem\"\n",
        ),
        "ca.pem",
    );
    refused(
        agent_toml("claude", "http://models.example.invalid", "", ""),
        "plain http is allowed only to this machine",
    );
}

/// The model behind TLS with a test CA: with `[gateway] ca` naming it, Claude Code's round
/// reaches the model through the gateway; with another CA, the gateway sends nothing and the
/// round's report says TLS refused it.
#[test]
fn the_model_is_reached_over_tls_with_the_ca_the_configuration_names() {
    let script = Script::new().text("DONE: over tls").repeat(true);
    let llm = FakeLlm::start(script).unwrap();
    let ca = ganger_test_support::TestCa::new("ganger gateway test ca");
    let port = ca.front(llm.addr());
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let key_file = world.root().join("anthropic.key");
    std::fs::write(&key_file, format!("{SECRET}\n")).unwrap();
    let key = format!("anthropic={}", key_file.display());
    std::fs::write(world.root().join("ca.pem"), &ca.pem).unwrap();
    let other = ganger_test_support::TestCa::new("another ca");
    std::fs::write(world.root().join("other.pem"), &other.pem).unwrap();
    let upstream = format!("https://localhost:{port}");
    let with_ca = |file: &str| {
        let path = world.root().join(file);
        let gateway = format!(
            "\n[gateway]\nca = {:?}\n\n[warm]\ndefault = false\n",
            path.to_string_lossy()
        );
        world.write(
            "ganger.toml",
            &agent_toml("claude", &upstream, "", &gateway),
        );
    };

    with_ca("ca.pem");
    let run = world.ganger(&["start", "tls", "--message", "hi", "--key", &key, "--json"]);
    run.expect_code(0);
    let requests: Vec<_> = llm
        .requests()
        .into_iter()
        .filter(|r| r.protocol.is_some())
        .collect();
    assert!(!requests.is_empty());
    assert!(
        requests
            .iter()
            .all(|r| r.header("x-api-key") == Some(SECRET))
    );
    assert_eq!(run.json()["gateway"]["requests"], requests.len());

    with_ca("other.pem");
    let run = world.ganger(&["start", "tls2", "--message", "hi", "--key", &key, "--json"]);
    run.expect_code(1);
    let report = run.json();
    let refused = report["gateway"]["refused"].to_string();
    assert!(refused.contains("TLS"), "{report:#}");
    let after: Vec<_> = llm
        .requests()
        .into_iter()
        .filter(|r| r.protocol.is_some())
        .collect();
    assert_eq!(after.len(), requests.len(), "nothing reached the model");
}

/// A task's token budget is held at the gateway: the next model request past it is refused
/// there, before it leaves. Codex reports its usage only at its turn's end, so nothing but the
/// gateway can see mid-turn that the first answer spent the budget: its second request (after
/// the tool ran) is the one refused, and the model hears only the first.
#[test]
fn a_spent_budget_stops_the_next_request_at_the_gateway() {
    let agent = "codex";
    let script = Script::new()
        .turn(shell(agent, "echo looked"))
        .text("DONE: should never be asked");
    let llm = FakeLlm::start(script).unwrap();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let (provider, keys) = provider(agent);
    world.write(
        "ganger.toml",
        // Cold: `codex exec` tells its usage only at its turn's end (a warm app-server tells
        // it as it goes, and ganger's own budget watch may stop the turn first).
        &agent_toml(
            agent,
            &llm.root_url(),
            "timeout = \"2m\"",
            &format!("{keys}\n[warm]\ndefault = false\n"),
        ),
    );
    let key_file = world.root().join("provider.key");
    std::fs::write(&key_file, format!("{SECRET}\n")).unwrap();
    let key = format!("{provider}={}", key_file.display());
    let run = world.ganger(&[
        "start",
        "b",
        "--message",
        "look around",
        "--key",
        &key,
        "--budget-tokens",
        "100",
        "--json",
    ]);
    let model: Vec<_> = llm
        .requests()
        .into_iter()
        .filter(|r| r.protocol.is_some())
        .collect();
    assert_eq!(
        model.len(),
        1,
        "the request past the budget reached the model"
    );
    let report = world.ganger(&["status", "b", "--json"]).json();
    let refused = report["gateway"]["refused"].to_string();
    assert!(
        refused.contains("the round's budget of 100 tokens is spent"),
        "{report:#}\n{}",
        run.stderr
    );
    assert_eq!(report["gateway"]["requests"], 1, "{report:#}");
    let log = world.ganger(&["log", "b", "--gateway"]).stdout;
    let refusals: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| !l["refused"].is_null())
        .collect();
    assert!(
        refusals.iter().any(|l| l["status"] == 403),
        "the gateway's log has no refusal: {log}"
    );
}

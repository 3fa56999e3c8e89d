//! The dashboard in a real headless Chromium (WebDriver), against a real `ganger serve` on a
//! real store: the page loads with the token given once in the address; a task started with
//! the CLI appears without a reload; its round's events stream into the task view while it
//! runs; a reload during the round loses no event and repeats none; cancel from the page
//! stops the round and leaves no agent process; an action without the token, or with a
//! read-only one, is refused; and a comment on a diff line becomes the next round's prompt,
//! as the scripted model receives it from the real Claude Code.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world;

use ganger_fake_llm::{FakeLlm, Script, Turn};
use ganger_test_support::{World, agent_toml, living_pids_with_env};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use web_world::browser::{Browser, browser_available};
use web_world::{Served, runtime};

const LONG: Duration = Duration::from_secs(60);
const VIEWER: &str = "vera-secret-0123456789abcdef0";

/// The round's event lines shown, their numbers, and the round's status on the page.
const ROUND_ON_PAGE: &str = "const round = document.querySelector('#round'); \
    return { status: round ? round.dataset.status : null, \
             numbers: [...document.querySelectorAll('.event-line')].map(e => Number(e.dataset.number)) };";

#[test]
fn the_page_follows_the_cli_streams_a_round_through_a_reload_and_cancels_it() {
    if !browser_available("web_browser") {
        return;
    }
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // 40 lines a twentieth of a second apart, or (HOLD) one line and a long wait.
    // It waits for the file `release` before its DONE line, so that the test decides when the
    // round ends, however slow the machine.
    let release = world.root().join("release");
    world.use_command_agent(
        &format!(
            "p=$(cat | tail -n 1); case \"$p\" in *HOLD*) echo holding; sleep 60;; \
             *) for i in $(seq 1 40); do echo \"line $i\"; sleep 0.05; done;; esac; \
             while [ ! -e '{}' ]; do sleep 0.05; done; echo 'DONE: counted'",
            release.display()
        ),
        "",
        "",
    );
    let tokens = world.repo.join(".ganger/web/tokens.toml");
    std::fs::create_dir_all(tokens.parent().unwrap()).unwrap();
    std::fs::write(
        &tokens,
        format!("[[token]]\ncommander = \"vera\"\nsecret = \"{VIEWER}\"\naccess = \"read\"\n"),
    )
    .unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let served = Served::start(world);
    runtime().block_on(async {
        let browser = Browser::on_dashboard(&served).await;
        // The token left the address bar at once.
        let url = browser.client.current_url().await.unwrap();
        assert!(!url.as_str().contains(&served.token), "{url}");

        // A task started with the CLI appears without a reload.
        served
            .world
            .ganger(&["start", "live", "--message", "count", "--label", "team=red", "--detach"])
            .expect_code(0);
        browser
            .wait_for(LONG, "the task's row", "return document.querySelector('tr[data-slug=\"live\"]');")
            .await;
        // Filter, group by label.
        browser
            .eval("const f = document.querySelector('#filter'); f.value = 'nothing-like-it'; f.dispatchEvent(new Event('input', {bubbles: true}));")
            .await;
        browser
            .wait_for(LONG, "the filter", "return document.querySelector('#task-count').textContent === '0 of 1 tasks';")
            .await;
        browser
            .eval("const f = document.querySelector('#filter'); f.value = 'red'; f.dispatchEvent(new Event('input', {bubbles: true})); \
                   const g = document.querySelector('#group-by'); g.value = 'team'; g.dispatchEvent(new Event('change', {bubbles: true}));")
            .await;
        let group = browser
            .wait_for(LONG, "the group", "return document.querySelector('tr.group th')?.textContent;")
            .await;
        assert_eq!(group, "team = red (1)");
        // A phone's width: the table fits, nothing to scroll sideways.
        assert!(
            browser
                .fits_a_phone("return document.querySelector('tr[data-slug=\"live\"]');", 1280, 900)
                .await
        );
        browser.click("tr[data-slug=\"live\"] a").await;

        // Its events stream in while it runs.
        let streaming = format!(
            "const r = (() => {{ {ROUND_ON_PAGE} }})(); return r.status === 'running' && r.numbers.length >= 5 ? r : null;"
        );
        let seen = browser.wait_for(LONG, "lines while the round runs", &streaming).await;
        assert_eq!(seen["status"], "running");

        // A reload mid-round: every line once, in order, by the round's end.
        browser.client.refresh().await.unwrap();
        let all_forty = format!(
            "const r = (() => {{ {ROUND_ON_PAGE} }})(); return r.status === 'running' && r.numbers.length >= 40 ? r : null;"
        );
        browser.wait_for(LONG, "40 lines after the reload", &all_forty).await;
        std::fs::write(&release, "").unwrap();
        let ended = format!(
            "const r = (() => {{ {ROUND_ON_PAGE} }})(); return r.status === 'done' && r.numbers.length >= 41 ? r : null;"
        );
        let after = browser.wait_for(LONG, "the round's end after a reload", &ended).await;
        let numbers: Vec<u64> = after["numbers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert_eq!(numbers, (1..=41).collect::<Vec<u64>>());
        assert_eq!(
            browser.eval("return document.querySelector('#answer').textContent;").await,
            "DONE: counted"
        );

        // Cancel from the page stops the round, and no agent process is left.
        served
            .world
            .ganger(&["start", "hold", "--message", "HOLD", "--detach"])
            .expect_code(0);
        browser.client.goto(&format!("{}/#/task/hold", served.base)).await.unwrap();
        browser
            .wait_for(LONG, "a running round to cancel", "return document.querySelector('#round')?.dataset.status === 'running' && document.querySelectorAll('.event-line').length > 0 && !document.querySelector('#cancel-button').disabled;")
            .await;
        let token = served.get("/api/tasks/hold/rounds/1").json()["report"]["token"]
            .as_str()
            .unwrap()
            .to_owned();
        let marker = format!("GANGER_ROUND={token}");
        assert!(!living_pids_with_env(&marker).is_empty(), "the agent should run");
        browser.click("#cancel-button").await;
        browser
            .wait_for(LONG, "the round cancelled", "return document.querySelector('#round')?.dataset.status === 'cancelled';")
            .await;
        // The round is recorded cancelled once its agent is stopped; a SIGKILLed process may
        // take a moment more to leave /proc on a loaded machine.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !living_pids_with_env(&marker).is_empty() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(living_pids_with_env(&marker).is_empty(), "an agent process was left");

        // The journal shows what happened, newest first.
        browser.client.goto(&format!("{}/#/journal", served.base)).await.unwrap();
        let kinds = browser
            .wait_for(LONG, "the journal", "const k = [...document.querySelectorAll('.journal-entry')].map(e => e.children[3].textContent); return k.some(t => t.startsWith('cancel')) ? k : null;")
            .await;
        assert!(
            kinds.as_array().unwrap().iter().any(|k| k.as_str().unwrap().starts_with("round-finished: done")),
            "{kinds}"
        );

        // Without the token the API refuses the page's own request.
        let status = browser
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1]; \
                 fetch('/api/tasks/hold/fix', {method: 'POST', headers: {'Content-Type': 'application/json'}, \
                 body: JSON.stringify({message: 'sneaky'})}).then(r => done(r.status));",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(status, json!(401));

        // A viewer's token: the page reads, and an action from it is refused.
        browser
            .client
            .goto(&format!("{}/#token={VIEWER}&/task/hold", served.base))
            .await
            .unwrap();
        browser.client.refresh().await.unwrap();
        browser
            .wait_for(LONG, "the viewer's page", "return document.querySelector('#whoami')?.textContent === 'vera (read)' && document.querySelector('#fix-message');")
            .await;
        browser.type_into("#fix-message", "a round from a viewer").await;
        browser.click("#fix-button").await;
        let refused = browser
            .wait_for(LONG, "the refusal", "return document.querySelector('#action-error')?.textContent;")
            .await;
        assert!(refused.as_str().unwrap().contains("read-only token"), "{refused}");
        assert_eq!(served.get("/api/tasks/hold").json()["task"]["rounds"], 1);
    });
}

#[test]
fn a_comment_on_a_diff_line_becomes_the_next_rounds_prompt() {
    if !browser_available("web_browser") {
        return;
    }
    // The worker is Claude Code, the cheapest agent to start: the page is the subject.
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let hello = world.worktree("review").join("hello.py");
    let script = Script::new()
        .turn(
            Turn::tool(
                "Write",
                json!({"file_path": hello, "content": "def hello():\n    return 1\n"}),
            )
            .when("write hello"),
        )
        .text("DONE: wrote hello")
        .turn(Turn::text("DONE: returned 2").when("Review comments"));
    let llm = FakeLlm::start(script).unwrap();
    world.write(
        "ganger.toml",
        &agent_toml("claude", &llm.root_url(), "", ""),
    );
    world
        .ganger(&["start", "review", "--message", "write hello.py"])
        .expect_code(0);
    let served = Served::start(world);
    runtime().block_on(async {
        let browser = Browser::start(1280, 900).await;
        browser
            .client
            .goto(&format!("{}/#token={}&/task/review", served.base, served.token))
            .await
            .unwrap();
        let line = "tr.diff-line[data-file=\"hello.py\"][data-line=\"2\"]";
        browser
            .wait_for(LONG, "the diff", &format!("return document.querySelector('{line}');"))
            .await;
        // Coloured as Python.
        assert_eq!(
            browser
                .eval("return document.querySelector('tr.diff-line[data-line=\"1\"] .hljs-keyword')?.textContent;")
                .await,
            "def"
        );
        browser.click(line).await;
        browser.type_into("#comment-text", "return 2 instead").await;
        browser.click("#add-comment").await;
        browser.click("#send-comments").await;
        browser
            .wait_for(LONG, "the note that the round was sent", "return document.querySelector('#task-note')?.textContent.includes('sent');")
            .await;
    });
    let task = served.wait_round_end("review", LONG);
    assert_eq!(task["task"]["rounds"], 2, "{task}");
    let prompt = served.get("/api/tasks/review/rounds/2").json()["prompt"]
        .as_str()
        .unwrap()
        .to_owned();
    let owner = task["task"]["owner"].as_str().unwrap();
    let wanted = format!(
        "Review comments on your changes (from {owner} on the dashboard):\n\n\
         1. hello.py, line 2:\n   > +    return 1\n   return 2 instead\n\n\
         Address each comment, and end with a DONE: line."
    );
    assert!(prompt.ends_with(&wanted), "{prompt}");
    // The scripted model received it from the agent.
    let received: Vec<Value> = llm
        .requests()
        .iter()
        .filter_map(|r| r.conversation.as_ref())
        .flat_map(|c| {
            c.prompts()
                .into_iter()
                .map(|p| json!(p))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        received
            .iter()
            .any(|p| p.as_str().is_some_and(|p| p.contains(&wanted))),
        "{received:#?}"
    );
}

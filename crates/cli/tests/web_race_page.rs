//! A race on the dashboard, in a real headless Chromium against a real `ganger serve` (issue
//! 40): a race started from the page opens on its page, which shows the attempts side by side
//! while they run, then, live, each one's checks, diff size and diff, the judges' verdicts with
//! their reasons, and the winner with the rule that decided; the races' list names it. The
//! `command` agent plays the attempts (attempt 1 writes one line, attempt 2 thirty, each once
//! the test releases it) and the judge (it prefers the side whose diff adds `tiny`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world::browser::{Browser, browser_available};
use crate::web_world::{Served, runtime};
use ganger_test_support::World;
use serde_json::Value;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(90);

fn agent(release: &std::path::Path) -> String {
    format!(
        r#"p=$(cat); case "$p" in
  *"Your role: judge"*)
    a=$(printf '%s\n' "$p" | sed -n '/^## Attempt A/,/^## Attempt B/p')
    case "$a" in *+tiny*) echo "WINNER: A - A is tiny";; *) echo "WINNER: B - B is tiny";; esac;;
  *) echo working; while [ ! -e '{}' ]; do sleep 0.05; done
    case "$PWD" in *r.1) echo tiny > answer.txt;; *) seq 1 30 > answer.txt;; esac
    echo "DONE: wrote it";;
esac"#,
        release.display()
    )
}

/// What the race's page shows: each attempt's column, the verdicts and the winner.
const RACE_ON_PAGE: &str = "const page = document.querySelector('#race'); if (!page) return null; \
    const text = (e, css) => e.querySelector(css)?.textContent.trim() ?? null; \
    return { status: page.dataset.status, \
      attempts: [...page.querySelectorAll('.attempt')].map(a => ({ task: a.dataset.task, \
        status: a.dataset.status, checks: text(a, '.attempt-checks'), size: text(a, '.attempt-size'), \
        record: text(a, '.attempt-record'), spend: text(a, '.attempt-spend'), \
        added: [...a.querySelectorAll('.d-add .code')].map(c => c.textContent) })), \
      verdicts: [...page.querySelectorAll('.verdict')].map(v => v.textContent.replace(/\\s+/g, ' ').trim()), \
      winner: text(page, '#race-winner'), rule: text(page, '#race-rule') };";

#[test]
fn the_page_shows_a_races_attempts_side_by_side_and_its_winner_live() {
    if !browser_available("web_race_page") {
        return;
    }
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let release = world.root().join("release");
    world.use_command_agent(&agent(&release), "", "");
    let served = Served::start(world);
    runtime().block_on(async {
        let browser = Browser::on_dashboard(&served).await;
        // Started from the races' view, it opens on its page, both attempts running.
        browser.click("a[href='#/races']").await;
        browser.type_into("#race-slug", "r").await;
        browser.type_into("#race-message", "write answer.txt").await;
        browser.type_into("#race-attempts", "command*2").await;
        browser.type_into("#race-check", "test -f answer.txt").await;
        browser.click("#race-button").await;
        let running = format!(
            "const r = (() => {{ {RACE_ON_PAGE} }})(); \
             return r && r.attempts.length === 2 && r.attempts.every(a => a.status === 'running') ? r : null;"
        );
        let seen = browser.wait_for(LONG, "both attempts running", &running).await;
        assert_eq!(seen["status"], "running", "{seen:#}");
        assert_eq!(seen["winner"], Value::Null, "{seen:#}");
        let tasks: Vec<&str> = seen["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["task"].as_str().unwrap())
            .collect();
        assert_eq!(tasks, ["r.1", "r.2"]);

        // Released, the race is judged and won, and the page follows without a reload.
        std::fs::write(&release, "").unwrap();
        let won = format!(
            "const r = (() => {{ {RACE_ON_PAGE} }})(); \
             return r && r.status === 'won' && r.attempts.every(a => a.added.length > 0) ? r : null;"
        );
        let page = browser.wait_for(LONG, "the race won", &won).await;
        assert_eq!(page["winner"], "winner: r.1 (attempt 1)", "{page:#}");
        assert_eq!(
            page["rule"],
            "rule: the most pairwise reviews won",
            "{page:#}"
        );
        let one = &page["attempts"][0];
        let two = &page["attempts"][1];
        assert_eq!(one["status"], "done");
        assert_eq!(one["checks"], "check pass");
        assert_eq!(one["size"], "1 file, +1/-0");
        assert_eq!(one["record"], "1 won, 0 lost, 0 tied");
        assert_eq!(one["added"], serde_json::json!(["tiny"]));
        assert_eq!(two["size"], "1 file, +30/-0");
        assert_eq!(two["record"], "0 won, 1 lost, 0 tied");
        assert_eq!(two["added"].as_array().unwrap().len(), 30);
        assert!(one["spend"].as_str().unwrap().contains("1 round"), "{one}");
        assert_eq!(
            page["verdicts"],
            serde_json::json!([
                "1 (A) v 2 (B): WINNER A, attempt 1 — A is tiny",
                "2 (A) v 1 (B): WINNER B, attempt 1 — B is tiny"
            ]),
            "{page:#}"
        );
        // Side by side on a desktop, one under the other on a phone, nothing to scroll sideways.
        assert!(
            browser
                .fits_a_phone("return document.querySelectorAll('.attempt').length === 2;", 1280, 900)
                .await
        );
        // The page says what the CLI's report says; the races' list names it, won.
        let report = served.world.ganger(&["status", "r", "--json"]).json();
        assert_eq!(report["winner_task"], "r.1");
        assert_eq!(report["rule"], "tournament");
        assert_eq!(report["owner"], "tester");
        browser.click("a[href='#/races']").await;
        let listed = browser
            .wait_for(LONG, "the race in the list", "return document.querySelector(\"a[data-race='r']\")?.closest('tr').textContent;")
            .await;
        assert!(listed.as_str().unwrap().contains("r.1 done"), "{listed}");
    });
}

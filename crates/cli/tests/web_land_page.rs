//! The merge queue on the dashboard, in a real headless Chromium against a real `ganger serve`
//! (issue 41): tasks queued from the page, the queue, the batch under test with its bisection
//! so far, then, live, the batch landed, the tasks sent back and why, the flaky check, and the
//! conflicts predicted between two running tasks with their file and lines, on the land view
//! and on each task's view.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world::browser::{Browser, browser_available};
use crate::web_world::land::{culprit, good, land_world, start_as};
use crate::web_world::{Served, runtime};
use ganger_test_support::wait_until;
use serde_json::json;
use std::process::Stdio;
use std::time::Duration;

const LONG: Duration = Duration::from_secs(90);

/// In the lander's scratch worktree only: `gate` holds its second run (the bisection's first
/// check run) while `$TMPDIR/hold` exists; `flaky` fails the first time it runs.
const CHECKS: &str = r#"
[[checks]]
name = "gate"
command = 'case "$PWD" in */.ganger/land/*) n=$(cat "$TMPDIR/runs" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$TMPDIR/runs"; if [ $n -eq 2 ]; then while [ -e "$TMPDIR/hold" ]; do sleep 0.05; done; fi;; esac'

[[checks]]
name = "flaky"
command = 'case "$PWD" in */.ganger/land/*) [ -e "$TMPDIR/flaked" ] || { touch "$TMPDIR/flaked"; echo flaked; exit 1; };; esac'
"#;

/// What the land view shows.
const LAND_ON_PAGE: &str = "const page = document.querySelector('#land'); if (!page) return null; \
    const rows = (css) => [...page.querySelectorAll(css)].map(e => e.textContent.replace(/\\s+/g, ' ').trim()); \
    return { queue: [...page.querySelectorAll('.land-item')].map(e => [e.dataset.task, e.dataset.state]), \
      testing: rows('.batch-testing'), probes: rows('.batch-testing .probe'), recent: rows('.batch-recent > .batch-line'), \
      returned: rows('.returned'), flaky: rows('.flaky'), conflicts: rows('.conflict') };";

#[test]
fn the_page_queues_tasks_and_shows_the_queue_its_bisection_and_the_conflicts() {
    if !browser_available("web_land_page") {
        return;
    }
    let world = land_world(CHECKS);
    good(&world, None, "g1");
    good(&world, None, "g2");
    culprit(&world, None, "c1");
    // x edits the README, which main changes meanwhile.
    start_as(&world, None, "x", "echo 'x was here' >> README.md", 0);
    world.write("README.md", "# test repository\nmain's own line\n");
    world.git(&["commit", "-q", "-am", "main: a line"]);
    // t1 and t2 edit the same lines of notes.txt while they are open.
    start_as(
        &world,
        None,
        "t1",
        "sed -i '10,12s/.*/t1 was here/' notes.txt",
        0,
    );
    start_as(
        &world,
        None,
        "t2",
        "sed -i '11s/.*/t2 was here/' notes.txt",
        0,
    );
    let served = Served::start(world);
    runtime().block_on(async {
        let browser = Browser::on_dashboard(&served).await;
        browser.click("a[href='#/land']").await;
        // The conflict predicted at t2's round's end, with its lines.
        let conflicts = browser
            .wait_for(LONG, "the predicted conflict", &format!(
                "const r = (() => {{ {LAND_ON_PAGE} }})(); return r && r.conflicts.length ? r.conflicts : null;"
            ))
            .await;
        let line = conflicts[0].as_str().unwrap();
        assert!(
            line.starts_with("t1 and t2 conflict in notes.txt, lines 10-"),
            "{conflicts}"
        );
        assert_eq!(conflicts.as_array().unwrap().len(), 1, "{conflicts}");
        // Each task's own view names it too.
        browser.client.goto(&format!("{}/#/task/t2", served.base)).await.unwrap();
        let named = browser
            .wait_for(LONG, "the conflict on t2's view", "return document.querySelector('.task-conflict')?.textContent;")
            .await;
        assert_eq!(named.as_str().unwrap(), format!("conflict: {line}"));
        browser.click("a[href='#/land']").await;

        // Queued from the page, as its owner.
        browser.type_into("#land-tasks", "g1 g2 c1 x").await;
        browser.click("#land-button").await;
        let queued = browser
            .wait_for(LONG, "the queue", &format!(
                "const r = (() => {{ {LAND_ON_PAGE} }})(); return r && r.queue.length === 4 ? r.queue : null;"
            ))
            .await;
        assert_eq!(
            queued,
            json!([["g1", "queued"], ["g2", "queued"], ["c1", "queued"], ["x", "queued"]])
        );

        // A lander runs; its bisection's first check run waits, and the page shows the batch
        // under test with the check run so far.
        let hold = served.world.tmp().join("hold");
        std::fs::write(&hold, "").unwrap();
        let mut lander = served.world.command(&["land", "--run", "--batch", "8"]);
        #[expect(
            clippy::disallowed_methods,
            reason = "the test runs ganger's own lander in the background"
        )]
        let lander = lander
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let runs = served.world.tmp().join("runs");
        assert!(wait_until(Duration::from_secs(60), || {
            std::fs::read_to_string(&runs).is_ok_and(|n| n.trim() == "2")
        }));
        let testing = browser
            .wait_for(LONG, "the batch under test", &format!(
                "const r = (() => {{ {LAND_ON_PAGE} }})(); return r && r.probes.length === 1 ? r : null;"
            ))
            .await;
        assert_eq!(
            testing["probes"],
            json!(["g1 + g2 + c1: red (tests), flaky: flaky"]),
            "{testing:#}"
        );
        assert!(
            testing["testing"][0]
                .as_str()
                .unwrap()
                .starts_with("batch 1 on main: testing, 1 check run"),
            "{testing:#}"
        );

        // Released: the batch lands, live.
        std::fs::remove_file(&hold).unwrap();
        let output = lander.wait_with_output().unwrap();
        let steps = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{steps}");
        let landed = browser
            .wait_for(LONG, "the batch landed", &format!(
                "const r = (() => {{ {LAND_ON_PAGE} }})(); return r && r.testing.length === 0 && r.recent.length && r.recent[0].startsWith('batch 1 on main: landed') ? r : null;"
            ))
            .await;
        let recent = landed["recent"][0].as_str().unwrap();
        assert!(
            recent.starts_with("batch 1 on main: landed g1, g2;") && recent.contains("check runs"),
            "{landed:#}\n{steps}\n{:#}",
            served.get("/api/land").json()
        );
        assert_eq!(landed["queue"], json!([]), "{landed:#}");
        assert_eq!(
            landed["returned"],
            json!([
                "c1 sent back: culprit, breaks tests",
                "x sent back: conflict in README.md (with base)"
            ]),
            "{landed:#}"
        );
        assert_eq!(landed["flaky"], json!(["flaky"]), "{landed:#}");
        assert!(
            browser
                .fits_a_phone("return document.querySelector('#land');", 1280, 900)
                .await
        );

        // t2 takes its change back in a later round: the conflict is cleared, live.
        served
            .world
            .ganger(&["fix", "t2", "--message", "git checkout notes.txt"])
            .expect_code(0);
        browser
            .wait_for(LONG, "the conflict cleared", &format!(
                "const r = (() => {{ {LAND_ON_PAGE} }})(); return r && r.conflicts.length === 0 && document.querySelector('#land').textContent.includes('None: the open tasks merge');"
            ))
            .await;
    });
}

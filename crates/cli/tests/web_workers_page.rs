//! The workers on the dashboard, in a real headless Chromium against a real `ganger serve`
//! (issue 44): each worker recorded in the store with its host, its load against its capacity,
//! whether it lives, and the agents it offers; a worker that runs a round shows it, one killed
//! outright shows dead, and the load follows without a reload when the round ends.
//! `GET /api/workers` is `ganger workers --json`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::web_world::browser::{Browser, browser_available};
use crate::web_world::{Served, runtime};
use ganger_test_support::{World, wait_until};
use serde_json::{Value, json};
use std::process::{Child, Stdio};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(90);

/// What the workers view shows: each row's name, host, load, state and agents.
const WORKERS_ON_PAGE: &str = "const rows = [...document.querySelectorAll('#workers tr.worker')]; \
    return rows.map(r => [...r.querySelectorAll('td')].map(td => td.textContent.trim()));";

/// A `ganger worker` in the background, killed when dropped.
struct Worker(Child);

impl Worker {
    #[expect(
        clippy::disallowed_methods,
        reason = "the worker is ganger itself, run in the background as a user runs it"
    )]
    fn start(world: &World, name: &str) -> Worker {
        let child = world
            .command(&["worker", "--name", name, "--capacity", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Worker(child)
    }

    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

fn workers(world: &World) -> Vec<Value> {
    let listed = world.ganger(&["workers", "--json"]);
    listed.expect_code(0);
    listed.json()["workers"].as_array().unwrap().clone()
}

#[test]
fn the_page_shows_each_workers_host_load_capacity_life_and_agents() {
    if !browser_available("web_workers_page") {
        return;
    }
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // The round waits for the file `release`, so that w1 runs it while the page looks.
    let release = world.root().join("release");
    world.use_command_agent(
        &format!(
            "cat >/dev/null; while [ ! -e '{}' ]; do sleep 0.05; done; echo 'DONE: ok'",
            release.display()
        ),
        "",
        "",
    );
    // w2 lives, then is killed outright; w1 takes the queued round.
    let mut w2 = Worker::start(&world, "w2");
    assert!(wait_until(LONG, || workers(&world)
        .iter()
        .any(|w| w["alive"] == true)));
    w2.kill();
    world
        .ganger(&["start", "held", "--message", "hold", "--queue"])
        .expect_code(0);
    let _w1 = Worker::start(&world, "w1");
    assert!(
        wait_until(LONG, || workers(&world)
            .iter()
            .any(|w| w["name"] == "w1" && w["load"] == 1)),
        "{:#?}",
        workers(&world)
    );
    let served = Served::start(world);
    let api = served.get("/api/workers");
    assert_eq!(api.status, 200, "{}", api.body);
    assert_eq!(api.json()["schema"], "ganger.workers/1");
    assert_eq!(api.json()["workers"], json!(workers(&served.world)));
    let host = api.json()["workers"][0]["host"]
        .as_str()
        .unwrap()
        .to_owned();
    runtime().block_on(async {
        let browser = Browser::on_dashboard(&served).await;
        browser.click("a[href='#/workers']").await;
        let rows = browser
            .wait_for(LONG, "both workers", &format!(
                "const rows = (() => {{ {WORKERS_ON_PAGE} }})(); return rows.length === 2 ? rows : null;"
            ))
            .await;
        let row = |name: &str| {
            rows.as_array()
                .unwrap()
                .iter()
                .find(|r| r[0] == name)
                .unwrap_or_else(|| panic!("no row {name}: {rows}"))
                .clone()
        };
        let (one, two) = (row("w1"), row("w2"));
        assert_eq!(one[1], host.as_str(), "{rows}");
        assert_eq!(one[2], "1 of 2", "{rows}");
        assert_eq!(one[3], "alive", "{rows}");
        assert!(one[4].as_str().unwrap().contains("command"), "{rows}");
        assert_eq!(two[2], "– of 2", "{rows}");
        assert_eq!(two[3], "dead", "{rows}");

        // The round ends: w1's load follows, without a reload.
        std::fs::write(&release, "").unwrap();
        browser
            .wait_for(LONG, "w1's load back to 0", &format!(
                "const rows = (() => {{ {WORKERS_ON_PAGE} }})(); return rows.some(r => r[0] === 'w1' && r[2] === '0 of 2');"
            ))
            .await;
    });
}

//! A world that is dropped (a test that ends, or fails half way) leaves none of its processes
//! running: one started in its repository, and one started elsewhere with its HOME.

#![allow(
    clippy::unwrap_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::{World, living_pids_with_env, wait_until};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn dropping_a_world_stops_what_it_left_running() {
    let world = World::new("/bin/false".as_ref());
    let marker = "GANGER_WORLD_DROP_TEST=1";
    let mut children = Vec::new();
    for (dir, home) in [
        (world.repo.clone(), "/nonexistent".into()),
        ("/".into(), world.home.clone()),
    ] {
        #[expect(
            clippy::disallowed_methods,
            reason = "the test plays a process a failed test left behind"
        )]
        let child = Command::new("setsid")
            .args(["sleep", "300"])
            .current_dir(dir)
            .env("HOME", home)
            .env("GANGER_WORLD_DROP_TEST", "1")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        children.push(child);
    }
    assert!(wait_until(Duration::from_secs(10), || {
        living_pids_with_env(marker).len() == 2
    }));
    drop(world);
    assert!(wait_until(Duration::from_secs(10), || {
        living_pids_with_env(marker).is_empty()
    }));
    for mut child in children {
        let _ = child.wait();
    }
}

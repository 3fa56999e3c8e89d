//! Task trees on a worker's clone of a fleet's remote (docs/trees.md, "Workers on other
//! hosts"): a worker keeps one clone per remote, and with the repository's `[trees]` the
//! tasks it starts there stand on one cached tree per base in that clone (overlays for
//! sandboxed tasks), not a checkout each; their work goes back to the remote as any task's.
//!
//! Real bubblewrap, as root, and a PostgreSQL store (`GANGER_TEST_POSTGRES`): under
//! `CI=true` a missing one fails the test.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::remote_fleet::{
    all_done_after, ganger, host, serve_git, serving, shown_on_remote, submit_fleet, tasks, worker,
};
use crate::tree_overlay::{Unmount, available};
use ganger_test_support::{PgDatabase, World, wait_until};
use std::path::Path;
use std::time::Duration;

/// The 40-hex names of the folders in `dir` (the cached trees of a cache folder).
fn cached_bases(cache: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return Vec::new();
    };
    let mut bases: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.len() == 40 && name.chars().all(|c| c.is_ascii_hexdigit()))
        .collect();
    bases.sort();
    bases
}

#[test]
fn a_workers_clone_keeps_one_cached_tree_for_the_tasks_it_starts_on_a_base() {
    let test = "a_workers_clone_keeps_one_cached_tree_for_the_tasks_it_starts_on_a_base";
    if !available("bwrap", test) {
        return;
    }
    let Some(db) = PgDatabase::new() else { return };
    let store = db.url.as_str();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let _unmount = Unmount(world.root().to_owned());
    world.use_command_agent(
        "cat >/dev/null; echo line >> work.txt; echo 'DONE: ok'",
        "timeout = \"120s\"",
        "\n[sandbox]\ndefault = \"bwrap\"\n\n[trees]\nmax = 2\n",
    );
    let (world, served, bare) = serving(world);
    let (_daemon, port) = serve_git(&world, &served, &[]);
    let url = format!("git://127.0.0.1:{port}/app.git");
    let slugs = ["r1", "r2", "r3"];
    submit_fleet(&world, store, &url, &slugs);

    let host_a = host(&world, "a");
    let a = worker(&world, store, &host_a, "a");
    assert!(
        wait_until(Duration::from_secs(120), || all_done_after(
            &world, store, 1
        )),
        "{:#?}\n{}",
        tasks(&world, store),
        a.log_text()
    );
    let remotes = host_a.join(".ganger/remotes");
    let mut clones = Vec::new();
    for hashed in std::fs::read_dir(&remotes).unwrap().flatten() {
        // The clone, beside the worktrees of its tasks (whose `.git` is a file).
        for entry in std::fs::read_dir(hashed.path()).unwrap().flatten() {
            if entry.path().join(".git").is_dir() {
                clones.push(entry.path());
            }
        }
    }
    assert_eq!(clones.len(), 1, "one clone per remote: {clones:?}");
    let clone = &clones[0];
    let base = world.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        cached_bases(&clone.join(".ganger/trees/cache")),
        [base],
        "one cached tree for the base, in the clone"
    );
    for slug in slugs {
        let status = ganger(&world, Some(store), &["status", slug, "--json"]).json();
        assert_eq!(status["tree"], "overlay", "{slug}: {status:#}");
        let worktree = status["worktree"].as_str().unwrap_or_default();
        assert!(
            Path::new(worktree).starts_with(clone.parent().unwrap().parent().unwrap()),
            "{slug}'s worktree is not beside the clone: {status:#}"
        );
        let shown = shown_on_remote(&bare, &format!("refs/ganger/{slug}/round-1:work.txt"));
        assert_eq!(shown.as_deref(), Some("line"), "{slug}: {}", a.log_text());
    }
    drop(a);
    // clean in the clone takes the overlays down: only the cached tree's seal stays mounted.
    let clone_text = clone.to_string_lossy().into_owned();
    let mut args = vec!["-C", clone_text.as_str(), "clean", "--force"];
    args.extend(slugs);
    ganger(&world, Some(store), &args).expect_code(0);
    let left = crate::tree_overlay::mounts_under(&host_a);
    assert!(
        left.iter()
            .all(|m| m.starts_with(clone.join(".ganger/trees/cache"))),
        "{left:?}"
    );
}

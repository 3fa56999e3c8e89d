//! The main checkout's dependency folders shared into overlay tasks (`[trees] share`,
//! docs/trees.md): a bwrap or Docker task on an overlay finds the main checkout's ignored
//! `node_modules` in its tree, changes it in its own layer only (the main checkout's stays as
//! it was), and none of it is part of the task's snapshot or diff. A folder the main checkout
//! lacks, or that git does not ignore, is left out. After a reboot (the mounts taken down by
//! hand) the next command mounts the folder again with the task's change; `clean` takes it
//! down with the overlay.
//!
//! Real bubblewrap and real Docker, as root: under `CI=true` a missing one fails the test.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::tree_overlay::{AS_USER, Unmount, available, engine, mounts_under};
use ganger_test_support::World;

/// Reads a shared file, changes one, adds one and deletes one, and shows what it found of a
/// folder that is not shared.
const AGENT: &str = "cat >/dev/null; cat node_modules/pkg/index.js > seen.txt; \
    echo changed > node_modules/pkg/index.js; echo new > node_modules/pkg/new.js; \
    rm node_modules/pkg/old.js; ls -a vendor > vendor-seen.txt 2>&1 || true; \
    echo 'DONE: used the shared folder'";

fn shared_world(sandbox: &str) -> (World, Unmount) {
    let mut world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    if sandbox == AS_USER {
        world = world.as_user(ganger_test_support::UNPRIVILEGED);
    }
    let guard = Unmount(world.root().to_owned());
    world.write(".gitignore", "node_modules/\ntarget/\n");
    world.write("src/main.txt", "main\n");
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "a tree that ignores node_modules"]);
    // Dependencies installed in the main checkout, ignored; and a folder that is not ignored.
    world.write("node_modules/pkg/index.js", "installed\n");
    world.write("node_modules/pkg/old.js", "old\n");
    world.write("vendor/lib.txt", "untracked, not ignored\n");
    world.use_command_agent(
        AGENT,
        "timeout = \"120s\"",
        &format!(
            "\n[sandbox]\ndefault = {:?}\n\n[trees]\nmax = 2\nshare = [\"node_modules\", \"target\", \"vendor\"]\n",
            engine(sandbox)
        ),
    );
    (world, guard)
}

fn an_overlay_task_uses_the_main_checkouts_dependencies_and_changes_only_its_own(sandbox: &str) {
    let test = format!(
        "{sandbox}: an_overlay_task_uses_the_main_checkouts_dependencies_and_changes_only_its_own"
    );
    if !available(sandbox, &test) {
        return;
    }
    let (world, _unmount) = shared_world(sandbox);
    let start = world.ganger(&["start", "deps", "--message", "use them"]);
    start.expect_code(0);
    assert!(
        start.stdout.contains(
            "an overlay on the cached tree, with node_modules shared from the main checkout\n"
        ),
        "{}\n{}",
        start.stdout,
        start.stderr
    );
    let status = world.ganger(&["status", "deps", "--json"]).json();
    assert_eq!(status["status"], "done", "{status}");
    assert_eq!(status["tree"], "overlay");
    // target: the main checkout has none; vendor: git does not ignore it.
    assert_eq!(status["shared"], serde_json::json!(["node_modules"]));

    // Read as the world's user: a FUSE mount (a task's overlay without root) lets no other in.
    let read = |path: &std::path::Path| world.read_file(path);
    let tree = world.worktree("deps");
    assert_eq!(read(&tree.join("seen.txt")), "installed\n");
    assert_eq!(read(&tree.join("node_modules/pkg/index.js")), "changed\n");
    assert_eq!(read(&tree.join("node_modules/pkg/new.js")), "new\n");
    assert!(world.sees_file(&tree.join("node_modules/pkg/index.js")));
    assert!(!world.sees_file(&tree.join("node_modules/pkg/old.js")));
    assert!(read(&tree.join("vendor-seen.txt")).contains("No such file"));
    assert!(!world.sees_file(&tree.join("vendor/lib.txt")));
    // The main checkout's folder is as it was.
    let main = world.repo.join("node_modules/pkg");
    assert_eq!(read(&main.join("index.js")), "installed\n");
    assert_eq!(read(&main.join("old.js")), "old\n");
    assert!(!main.join("new.js").exists());

    // The task's snapshot and diff hold its own files, nothing of the shared folder.
    let files = world.git(&["ls-tree", "-r", "--name-only", "refs/ganger/deps/round-1"]);
    let files: Vec<&str> = files.lines().collect();
    assert_eq!(
        files,
        [
            ".gitignore",
            "README.md",
            "seen.txt",
            "src/main.txt",
            "vendor-seen.txt"
        ]
    );
    let diff = world.ganger(&["diff", "deps"]);
    diff.expect_code(0);
    assert!(diff.stdout.contains("seen.txt"), "{}", diff.stdout);
    assert!(!diff.stdout.contains("node_modules"), "{}", diff.stdout);

    // A reboot takes the mounts down: the next command mounts the folder again, with the
    // task's change in it.
    let point = tree.join("node_modules");
    assert_eq!(mounts_under(&tree), [tree.clone(), point.clone()]);
    for mount in [&point, &tree] {
        let out = std::process::Command::new("umount")
            .arg(mount)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    world.ganger(&["diff", "deps"]).expect_code(0);
    assert_eq!(mounts_under(&tree), [tree.clone(), point.clone()]);
    assert_eq!(read(&tree.join("node_modules/pkg/index.js")), "changed\n");

    // A second round finds its own change.
    let fix = world.ganger(&["fix", "deps", "--message", "again", "--json"]);
    assert_eq!(fix.json()["status"], "done", "{}", fix.stderr);
    assert_eq!(read(&tree.join("seen.txt")), "changed\n");

    // clean takes the shared folder's mount down with the overlay, and its layer with it.
    world.ganger(&["clean", "--force", "deps"]).expect_code(0);
    assert_eq!(mounts_under(&tree), Vec::<std::path::PathBuf>::new());
    assert!(
        mounts_under(world.root())
            .iter()
            .all(|m| m.starts_with(world.repo.join(".ganger/trees/cache"))),
        "only the cached tree's seal stays mounted: {:?}",
        mounts_under(world.root())
    );
    assert!(!tree.exists());
    let uppers = world.repo.join(".ganger/trees/upper");
    assert_eq!(std::fs::read_dir(&uppers).unwrap().count(), 0);
    assert_eq!(read(&main.join("index.js")), "installed\n");
}

mod bwrap {
    #[test]
    fn an_overlay_task_uses_the_main_checkouts_dependencies_and_changes_only_its_own() {
        super::an_overlay_task_uses_the_main_checkouts_dependencies_and_changes_only_its_own(
            "bwrap",
        );
    }
}

/// Without root the overlay is a FUSE mount, inside which `fusermount3` (root, which a user's
/// FUSE mount keeps out) cannot mount: the folders are left out, and the task runs without
/// them, nothing of the attempt left in its tree.
#[test]
fn without_root_the_folders_are_left_out_and_the_task_runs_without_them() {
    let test = "without_root_the_folders_are_left_out_and_the_task_runs_without_them";
    if !available(AS_USER, test) {
        return;
    }
    let (world, _unmount) = shared_world(AS_USER);
    let start = world.ganger(&["start", "deps", "--message", "use them"]);
    start.expect_code(0);
    assert!(
        start.stdout.contains("an overlay on the cached tree\n"),
        "{}\n{}",
        start.stdout,
        start.stderr
    );
    let status = world.ganger(&["status", "deps", "--json"]).json();
    assert_eq!(status["tree"], "overlay", "{status}");
    assert_eq!(status["shared"], serde_json::Value::Null, "{status}");
    let tree = world.worktree("deps");
    assert_eq!(mounts_under(&tree), std::slice::from_ref(&tree));
    let seen = world.read_file(&tree.join("seen.txt"));
    assert_eq!(seen, "", "the agent found no node_modules");
    let files = world.git(&["ls-tree", "-r", "--name-only", "refs/ganger/deps/round-1"]);
    assert!(files.lines().any(|f| f == "seen.txt"), "{files}");
    assert!(!files.contains("node_modules"), "{files}");
    world.ganger(&["clean", "--force", "deps"]).expect_code(0);
    assert_eq!(mounts_under(&tree), Vec::<std::path::PathBuf>::new());
}

mod docker {
    #[test]
    fn an_overlay_task_uses_the_main_checkouts_dependencies_and_changes_only_its_own() {
        super::an_overlay_task_uses_the_main_checkouts_dependencies_and_changes_only_its_own(
            "docker",
        );
    }
}

/// A share that cannot be is refused before anything is made, with exit 2 naming it.
#[test]
fn a_share_that_cannot_be_is_refused_with_exit_2() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    for (trees, said) in [
        (
            "max = 2\nshare = [\"../deps\"]",
            "trees.share: \"../deps\" leaves the repository",
        ),
        (
            "share = [\"node_modules\"]",
            "trees.share: set while the tree cache is off",
        ),
    ] {
        world.use_command_agent(
            "cat >/dev/null; echo DONE",
            "",
            &format!("\n[trees]\n{trees}\n"),
        );
        let run = world.ganger(&["start", "refused", "--message", "m"]);
        run.expect_code(2);
        assert!(run.stderr.contains(said), "{}", run.stderr);
        assert!(!world.worktree("refused").exists());
        assert_eq!(world.git(&["branch", "--list", "agent/refused"]), "");
    }
}

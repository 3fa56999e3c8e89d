//! `ganger checkout SLUG [PATH]` (docs/trees.md): any task's tree as a plain worktree for an
//! editor or for work by hand: detached at the task's branch, the task's files on top as
//! unstaged changes, the task untouched; from the last snapshot when the task's worktree is
//! gone; bad input is exit 2 with nothing made.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

const AGENT: &str = "cat >/dev/null; echo changed > src/a.txt; rm src/b.txt; \
    mv src/c.txt src/moved.txt; ln -s a.txt src/link; chmod +x src/d.txt; \
    echo 'DONE: changed five things'";

fn task_world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    for name in ["a", "b", "c", "d"] {
        world.write(&format!("src/{name}.txt"), &format!("{name}\n"));
    }
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "four files"]);
    world.use_command_agent(AGENT, "", "");
    world
        .ganger(&["start", "work", "--message", "change"])
        .expect_code(0);
    world
}

/// The files under `dir` (not `.git`), with their content or link target and executable bit.
fn files(dir: &std::path::Path) -> Vec<String> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(
            "find . -path ./.git -prune -o \\( -type f -o -type l \\) -print | sort | \
             while read -r f; do if [ -L \"$f\" ]; then echo \"$f -> $(readlink \"$f\")\"; \
             else echo \"$f $(test -x \"$f\" && echo x) $(cat \"$f\")\"; fi; done",
        )
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_checkout_is_a_plain_worktree_with_the_tasks_work_on_its_branch() {
    let world = task_world();
    let place = world.root().join("by-hand");
    let run = world.ganger(&["checkout", "work", place.to_str().unwrap(), "--json"]);
    run.expect_code(0);
    assert_eq!(run.json()["schema"], "ganger.checkout/1");
    let tip = world.git(&["rev-parse", "agent/work"]);
    assert_eq!(run.json()["at"], tip.as_str());
    assert_eq!(files(&place), files(&world.worktree("work")));
    let status = world.git_in(&place, &["status", "--porcelain"]);
    for line in [
        " M src/a.txt",
        " D src/b.txt",
        " D src/c.txt",
        "?? src/moved.txt",
        " M src/d.txt",
    ] {
        assert!(status.contains(line), "{line}: {status}");
    }
    assert!(world.git(&["worktree", "list"]).contains("by-hand"));
    // The task is as it was, and goes on.
    let task = world.git_in(&world.worktree("work"), &["status", "--porcelain"]);
    assert!(task.contains(" M src/a.txt"), "{task}");
    world.ganger(&["status", "work"]).expect_code(0);
    // With the task's worktree gone, from its last snapshot; default place.
    world.git(&[
        "worktree",
        "remove",
        "--force",
        world.worktree("work").to_str().unwrap(),
    ]);
    let run = world.ganger(&["checkout", "work", "--json"]);
    run.expect_code(0);
    let default = world.root().join("repo-checkout-work");
    assert_eq!(run.json()["worktree"], default.to_str().unwrap());
    assert_eq!(files(&default), files(&place));
}

#[test]
fn a_checkout_refuses_bad_input_and_makes_nothing() {
    let world = task_world();
    let full = world.root().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("x"), "x").unwrap();
    let inside = world.repo.join("inside");
    let in_task = world.worktree("work").join("sub");
    for (args, says) in [
        (vec!["checkout", "nope"], "no task nope"),
        (vec!["checkout", "../bad"], "bad"),
        (
            vec!["checkout", "work", full.to_str().unwrap()],
            "is not an empty directory",
        ),
        (
            vec!["checkout", "work", inside.to_str().unwrap()],
            "inside the main checkout",
        ),
        (
            vec!["checkout", "work", in_task.to_str().unwrap()],
            "inside the task's worktree",
        ),
        (vec!["checkout"], "SLUG"),
    ] {
        let run = world.ganger(&args);
        run.expect_code(2);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    assert!(!inside.exists() && !in_task.exists());
    assert_eq!(world.worktree_count(), 2, "{}", world.worktrees());
}

//! The end snapshot of a task's first round in a worktree of thousands of files asks git about
//! the paths a watch saw change (docs/design.md, "Snapshots"): the round's changes, its
//! snapshot and `ganger diff` are what a full look at the worktree gives, for every kind of
//! change, and an agent that commits (the index changes) gets the full look.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_test_support::World;

/// A repository of 2,500 committed files in 50 directories: above the size a watch pays for.
fn big_world() -> World {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    for n in 0..2_500 {
        world.write(
            &format!("src/d{:02}/f{n:04}.txt", n / 50),
            &format!("{n}\n"),
        );
    }
    world.write(".gitignore", "*.log\n");
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "2,500 files"]);
    world
}

/// What a full look at the worktree holds (the tree of `git add -A` into a copy of its index).
fn full_tree(world: &World, slug: &str) -> String {
    let worktree = world.worktree(slug);
    let index = world.root().join("full.index");
    let git_dir = world.git_in(&worktree, &["rev-parse", "--git-dir"]);
    let git_dir = worktree.join(git_dir.trim());
    std::fs::copy(git_dir.join("index"), &index).unwrap();
    let git = |args: &[&str]| {
        let mut command = std::process::Command::new("git");
        world.env(&mut command);
        let out = command
            .args(args)
            .current_dir(&worktree)
            .env("GIT_INDEX_FILE", &index)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(&["add", "-A"]);
    git(&["write-tree"])
}

#[test]
fn a_first_round_in_a_big_worktree_snapshots_every_kind_of_change() {
    let world = big_world();
    world.use_command_agent(
        "cat >/dev/null; echo changed > src/d00/f0000.txt; rm src/d01/f0050.txt; \
         mv src/d02/f0100.txt src/d02/moved.txt; mkdir -p new/deep; echo deep > new/deep/a.txt; \
         echo top > top.txt; echo noise > noise.log; chmod +x src/d03/f0150.txt; \
         echo 'DONE: changed seven things'",
        "",
        "",
    );
    let run = world.ganger(&["start", "big", "--message", "change", "--json"]);
    run.expect_code(0);
    let report = run.json();
    assert_eq!(report["status"], "done", "{report:#}");
    let mut changed: Vec<String> = report["changed"]["shown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    changed.sort();
    assert_eq!(
        changed,
        [
            "A new/deep/a.txt",
            "A src/d02/moved.txt",
            "A top.txt",
            "D src/d01/f0050.txt",
            "D src/d02/f0100.txt",
            "M src/d00/f0000.txt",
            "M src/d03/f0150.txt",
        ]
    );
    let snapshot_tree = world.git(&["rev-parse", "refs/ganger/big/round-1^{tree}"]);
    assert_eq!(snapshot_tree.trim(), full_tree(&world, "big"));
}

#[test]
fn an_agent_that_commits_gets_the_full_look() {
    let world = big_world();
    world.use_command_agent(
        "cat >/dev/null; echo committed > src/d00/f0000.txt; git add -A; \
         git -c user.name=a -c user.email=a@a commit -qm mine; echo loose > loose.txt; \
         echo 'DONE: committed'",
        "",
        "",
    );
    let run = world.ganger(&["start", "commits", "--message", "commit", "--json"]);
    run.expect_code(0);
    assert_eq!(run.json()["status"], "done");
    let snapshot_tree = world.git(&["rev-parse", "refs/ganger/commits/round-1^{tree}"]);
    assert_eq!(snapshot_tree.trim(), full_tree(&world, "commits"));
    let diff = world.ganger(&["diff", "commits", "--stat"]);
    diff.expect_code(0);
    assert!(diff.stdout.contains("loose.txt"), "{}", diff.stdout);
    assert!(diff.stdout.contains("f0000.txt"), "{}", diff.stdout);
}

/// The git commands a `start` ran, from git's own trace (trace2's events, `GIT_TRACE2_EVENT`:
/// one line per event, each naming its process): each one's subcommand and its options, without
/// paths and commit ids (which differ between tasks). The commands of a process that worked on
/// `.ganger/trees/` (the pool's filler making a tree beside the start, the cache making its
/// tree of the base), and of the processes it ran, are left out.
fn git_commands(world: &World, slug: &str, sandbox: &str) -> Vec<String> {
    let trace = world.root().join(format!("git-trace-{slug}"));
    let out = world
        .command(&["start", slug, "--sandbox", sandbox, "--message", "change"])
        .env("GIT_TRACE2_EVENT", &trace)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    // Each process (its sid, the parent's sid before a `/`): its arguments and its command's name.
    let mut runs: Vec<(String, Vec<String>, String)> = Vec::new();
    let mut in_trees: std::collections::HashSet<String> = std::collections::HashSet::new();
    let root = |sid: &str| sid.split('/').next().unwrap_or(sid).to_owned();
    for event in text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
    {
        let sid = event["sid"].as_str().unwrap_or_default().to_owned();
        let mut words: Vec<String> = Vec::new();
        match event["event"].as_str() {
            Some("start") => {
                words = event["argv"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|word| word.as_str().map(str::to_owned))
                    .collect();
                runs.push((sid.clone(), words.clone(), String::new()));
            }
            Some("cmd_name") => {
                let name = event["name"].as_str().unwrap_or_default();
                if let Some(run) = runs.iter_mut().rev().find(|run| run.0 == sid) {
                    name.clone_into(&mut run.2);
                }
            }
            Some("def_repo") => {
                words.push(event["worktree"].as_str().unwrap_or_default().to_owned())
            }
            _ => {}
        }
        if words.iter().any(|word| word.contains("/.ganger/trees/")) {
            in_trees.insert(root(&sid));
        }
    }
    runs.into_iter()
        .filter(|(sid, _, _)| !in_trees.contains(&root(sid)))
        .map(|(_, argv, name)| {
            // From the command's name on: what comes before it is git's own options and argv[0].
            let at = argv
                .iter()
                .skip(1)
                .position(|word| *word == name)
                .map_or(argv.len(), |at| at + 1);
            argv[at..]
                .iter()
                .filter(|word| !word.contains('/') && !word.contains(slug) && word.len() < 40)
                .map(|word| word.split('=').next().unwrap_or(word))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Whether bubblewrap runs here; under `CI=true` a missing one fails the test (CI never
/// skips), elsewhere the test says it is skipped.
#[expect(clippy::print_stderr, reason = "a skipped test says so")]
fn bwrap_here() -> bool {
    let runs = std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "true"])
        .status()
        .is_ok_and(|status| status.success());
    if !runs && std::env::var("CI").as_deref() == Ok("true") {
        panic!("bubblewrap does not run here under CI=true");
    }
    if !runs {
        eprintln!("skipped: bubblewrap does not run here");
    }
    runs
}

/// The sandbox adds no look at the tree: a bubblewrap start's first round in a big worktree
/// runs the git commands a local one runs, and its end snapshot asks git about the watched
/// path only (issue 43 asked whether a sandboxed start walks the tree: a full `git add -A`
/// of a 100,000-file checkout re-reads every racily clean file).
#[test]
fn a_sandboxed_first_round_asks_git_what_a_local_one_does() {
    if !bwrap_here() {
        return;
    }
    let world = big_world();
    world.use_command_agent(
        "cat >/dev/null; echo changed > src/d00/f0000.txt; echo 'DONE: one file'",
        "",
        "",
    );
    let mut local = git_commands(&world, "here", "local");
    let mut sandboxed = git_commands(&world, "boxed", "bwrap");
    if ganger_test_support::trees_are_on() {
        // With task trees on, each start's tree is made its own way by design (docs/trees.md): a
        // local one's by a reflink copy of the cached tree (a checkout where there is no
        // reflink) or from the pool, a sandboxed one's as an overlay on the cached tree. What
        // the round then asks git, from the snapshot on, is what is compared.
        for commands in [&mut local, &mut sandboxed] {
            let snapshot = commands
                .iter()
                .position(|c| c.starts_with("add"))
                .unwrap_or(0);
            commands.drain(..snapshot);
        }
    }
    assert_eq!(sandboxed, local);
    let adds: Vec<&String> = sandboxed.iter().filter(|c| c.starts_with("add")).collect();
    assert_eq!(adds.len(), 1, "{sandboxed:?}");
    assert!(adds[0].contains("--pathspec-from-file"), "{sandboxed:?}");
}

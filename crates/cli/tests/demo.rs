//! `ganger demo`, the README's first command, run as a user runs it: the pinned OpenCode from
//! ganger's cache, the scripted model, a first round that fails the repository's check, the
//! fix round `--until-green` sends in the same session, and nothing left behind.

use ganger_test_support::{World, opencode_program, opencode_version, wait_until};
use std::path::PathBuf;
use std::time::Duration;

/// The pinned OpenCode as a path (`opencode_program` may name one found on `PATH`).
fn opencode_path() -> PathBuf {
    let program = opencode_program();
    if program.components().count() > 1 {
        return program;
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(&program))
        .find(|path| path.is_file())
        .expect("the pinned OpenCode on PATH")
}

#[test]
fn the_demo_runs_the_loop_to_green_in_one_session_and_leaves_nothing_behind() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // The demo takes OpenCode from ganger's cache (installing it there when missing): the
    // world's cache gets the pinned install, as `scripts/test.sh` made it.
    let bin = world.home.join(format!(
        ".cache/ganger/agents/opencode-{}/node_modules/.bin",
        opencode_version()
    ));
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(opencode_path(), bin.join("opencode")).unwrap();

    let run = world.ganger(&["demo"]);
    run.expect_code(0);
    let out = &run.stdout;
    assert!(!out.contains("installing"), "{out}");
    assert!(
        out.contains(&bin.join("opencode").display().to_string()),
        "{out}"
    );
    // The first round wrote one line and failed the check; its failure went back to the same
    // session as the second round's prompt, and that round added the line the check wanted.
    assert!(
        out.contains("checks failed after round 1 of hello (two-lines); sending them back"),
        "{out}"
    );
    assert!(out.contains("task: hello, round 2 (fix)"), "{out}");
    assert!(
        out.contains("| ganger ran this task's checks in the worktree after your last round"),
        "{out}"
    );
    assert!(out.contains("checks: two-lines passed"), "{out}");
    assert!(
        out.contains("+This line was added in round 2, in the same session."),
        "{out}"
    );
    let table = out
        .split("== ganger status")
        .nth(1)
        .and_then(|rest| rest.split("== ganger diff").next())
        .unwrap_or_default();
    let row = table
        .lines()
        .find(|line| line.split_whitespace().next() == Some("hello"))
        .unwrap_or_else(|| panic!("no row of the task in:\n{table}"));
    assert!(row.contains("done"), "{row}");
    // Both rounds' requests reached the scripted model in one conversation: the last carried
    // the first round's messages too.
    let (requests, messages) = out
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix("== the model received ")?;
            let (requests, rest) = rest.split_once(" requests; the last one carried ")?;
            let (messages, _) = rest.split_once(' ')?;
            Some((
                requests.parse::<usize>().ok()?,
                messages.parse::<usize>().ok()?,
            ))
        })
        .unwrap_or_else(|| panic!("no count of the model's requests in:\n{out}"));
    assert!(requests >= 4, "{out}");
    assert!(messages >= 6, "{out}");
    assert!(out.contains("the demo repository was removed"), "{out}");

    // Nothing of it is left: no agent, warm host or model server, no directory.
    assert!(
        wait_until(Duration::from_secs(2), || world.left_running().is_empty()),
        "left running: {:?}",
        world.left_running()
    );
    let left: Vec<_> = std::fs::read_dir(world.tmp())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

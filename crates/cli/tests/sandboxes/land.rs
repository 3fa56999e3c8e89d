//! The merge queue's checks run in the tasks' sandbox (issue 41): a batch of sandboxed tasks
//! is checked in that sandbox, a local task in a batch of its own, locally.

use ganger_test_support::World;
use serde_json::Value;

/// `plain` (local) and `t1`, `t2` (in `sandbox`) queued in that order and landed. The check
/// asks for confinement only once the tree has `sandboxed-only` (which `t1` adds): then it
/// fails where the main checkout's `.git` is visible, and writes a file outside the tree,
/// which a sandbox keeps from the host. Checked locally as one batch, `t1` would be a
/// culprit; checked each in its own sandbox, all three land, in two batches.
pub fn a_batchs_checks_run_in_its_tasks_sandbox(sandbox: &str) {
    let test = format!("{sandbox}::a_batchs_checks_run_in_its_tasks_sandbox");
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    if sandbox == "docker" {
        ganger_test_support::ensure_worker_image(env!("CARGO_BIN_EXE_ganger").as_ref(), "command");
    }
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let main_git = world.repo.join(".git/HEAD");
    let outside = world.root().join("written-by-a-check");
    let check = format!(
        "if test -e sandboxed-only; then echo leak > {out} 2>/dev/null; \
         if test -e {git}; then echo {git} is visible; exit 1; fi; echo confined; fi; true",
        out = outside.display(),
        git = main_git.display()
    );
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\ntimeout = \"60s\"\n\n[sandbox]\ndefault = {sandbox:?}\n\n\
             [agents.command]\nargv = [\"/bin/sh\", \"-c\", \"eval \\\"$(cat)\\\"\"]\nformat = \"text\"\n\n\
             [[checks]]\nname = \"confined\"\ncommand = {check:?}\n"
        ),
    );
    world.write(".gitignore", "ganger.toml\n");
    world.git(&["add", ".gitignore"]);
    world.git(&["commit", "-q", "-m", "an ignore"]);
    let start = |slug: &str, script: &str, extra: &[&str]| {
        let mut args = vec!["start", slug, "--message", script, "--json"];
        args.extend_from_slice(extra);
        let run = world.ganger(&args);
        assert_eq!(run.json()["status"], "done", "{slug}: {}", run.stderr);
    };
    start("plain", "echo plain > plain.txt", &["--sandbox", "local"]);
    start("t1", "echo t1 > sandboxed-only", &[]);
    start("t2", "echo t2 > t2.txt", &[]);
    for slug in ["plain", "t1", "t2"] {
        world.ganger(&["land", slug]).expect_code(0);
    }
    let run = world.ganger(&["land", "--run", "--json"]);
    run.expect_code(0);
    let report: Value = run.json();
    let landed: Vec<Vec<String>> = report["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| serde_json::from_value(b["landed"].clone()).unwrap())
        .collect();
    assert_eq!(
        landed,
        [vec!["plain"], vec!["t1", "t2"]],
        "{report:#}\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("(checks in {sandbox}): t1, t2")),
        "{}",
        run.stderr
    );
    assert!(
        !outside.exists(),
        "a batch's check wrote outside its sandbox"
    );
    if sandbox == "docker" {
        let label = format!("label=ganger.task=land-{}", hex("main"));
        let repo = format!("label=ganger.repo={}", world.repo.display());
        let out = std::process::Command::new("docker")
            .args(["volume", "ls", "-q", "--filter", &label, "--filter", &repo])
            .output()
            .unwrap();
        let left = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(left.trim().is_empty(), "the lander left volumes: {left}");
    }
    for file in ["plain.txt", "sandboxed-only", "t2.txt"] {
        world.git(&["cat-file", "-e", &format!("main:{file}")]);
    }
}

fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

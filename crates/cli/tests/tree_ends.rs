//! How the task-tree tests (tree_cache.rs, tree_overlay.rs) hold that a round on a tree made
//! another way ends exactly as one in a worktree `git worktree add` made.

use ganger_test_support::World;

/// Commits the files the tests' rounds change: `src/{a,b,c,d}.txt`, an empty file and a
/// symlink, and two directories (`gone/`, `dropped/`) a round can delete whole.
pub fn commit_five_files_and_a_link(world: &World) {
    for name in ["a", "b", "c", "d"] {
        world.write(&format!("src/{name}.txt"), &format!("{name}\n"));
    }
    for name in ["gone/x.txt", "gone/sub/y.txt", "dropped/q.txt"] {
        world.write(name, "in a directory\n");
    }
    world.write("src/empty.txt", "");
    std::os::unix::fs::symlink("a.txt", world.repo.join("src/old-link")).unwrap();
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "five files and a link"]);
}

/// Task `made`'s first round ends as task `plain`'s, both from the same main: the same
/// snapshot tree, the same `diff` (which names each of `changes`), and the same tree once
/// each is merged onto that main. Leaves main at `made`'s merge.
pub fn assert_same_ends(world: &World, made: &str, plain: &str, changes: &[&str]) {
    let tree =
        |slug: &str| world.git(&["rev-parse", &format!("refs/ganger/{slug}/round-1^{{tree}}")]);
    assert_eq!(tree(made), tree(plain));
    let diff = |slug: &str| {
        let run = world.ganger(&["diff", slug]);
        run.expect_code(0);
        run.stdout.replace(slug, "SLUG")
    };
    let made_diff = diff(made);
    for change in changes {
        assert!(made_diff.contains(change), "{change}: {made_diff}");
    }
    assert_eq!(made_diff, diff(plain));
    let base = world.git(&["rev-parse", "HEAD"]);
    world.ganger(&["merge", plain]).expect_code(0);
    let merged = world.git(&["rev-parse", "main^{tree}"]);
    assert_ne!(
        merged,
        world.git(&["rev-parse", &format!("{base}^{{tree}}")])
    );
    world.git(&["reset", "-q", "--hard", &base]);
    world.ganger(&["merge", made]).expect_code(0);
    assert_eq!(world.git(&["rev-parse", "main^{tree}"]), merged);
}

//! The tree cache (`[trees] max`, `[trees] disk`, docs/trees.md) and the reflink copies local
//! tasks get from it on a file system that shares blocks (an XFS image the test makes): a
//! copied worktree is a real git worktree on the task's branch; a round in it ends exactly as
//! one in a worktree `git worktree add` made (snapshot, diff, merge); a cached tree someone
//! modified is made again, never used; the least recently used base goes over the limits; a
//! full disk while a cached tree is made is exit 70 with nothing half made; a setting that
//! cannot be is exit 2.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use crate::scratch_fs;
use ganger_test_support::World;
use std::path::Path;

/// Every kind of change a round can make: a change, a deletion, a rename, a new directory, a
/// symlink, a mode change and a repository made inside the worktree.
const AGENT: &str = "cat >/dev/null; echo changed > src/a.txt; rm src/b.txt; \
    mv src/c.txt src/moved.txt; mkdir -p new/deep; echo deep > new/deep/a.txt; \
    ln -s a.txt src/link; chmod +x src/d.txt; \
    mkdir nest && (cd nest && git init -q && echo n > n.txt && git add n.txt && GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \
    git -c user.name=t -c user.email=t@t commit -qm n); echo 'DONE: changed seven things'";

fn cache_world(parent: &Path, trees: &str) -> World {
    let world = World::new_in(env!("CARGO_BIN_EXE_ganger").as_ref(), parent);
    crate::tree_ends::commit_five_files_and_a_link(&world);
    set_trees(&world, trees);
    world
}

fn set_trees(world: &World, trees: &str) {
    world.use_command_agent(AGENT, "", &format!("\n[trees]\n{trees}\n"));
}

/// The cached bases, from `ganger trees --json`.
fn cached(world: &World) -> Vec<String> {
    let run = world.ganger(&["trees", "--json"]);
    run.expect_code(0);
    run.json()["cached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["base"].as_str().unwrap().to_owned())
        .collect()
}

fn tree_of(world: &World, slug: &str) -> Option<String> {
    let run = world.ganger(&["status", slug, "--json"]);
    run.expect_code(0);
    run.json()["tree"].as_str().map(str::to_owned)
}

#[test]
fn a_local_start_on_xfs_gets_a_reflink_copy_that_is_a_real_worktree() {
    let Some(fs) = scratch_fs::xfs(300) else {
        return;
    };
    let world = cache_world(&fs.dir, "max = 2");
    let run = world.ganger(&["start", "copied", "--message", "change"]);
    run.expect_code(0);
    assert!(
        run.stdout
            .contains("on agent/copied from main, a reflink copy of the cached tree"),
        "{}",
        run.stdout
    );
    assert_eq!(tree_of(&world, "copied").as_deref(), Some("reflink"));
    let head = world.git(&["rev-parse", "HEAD"]);
    assert_eq!(cached(&world), std::slice::from_ref(&head));
    // A real worktree on the task's branch, whose only changes are the agent's.
    let listed = world.git(&["worktree", "list", "--porcelain"]);
    let entry = format!("worktree {}\n", world.worktree("copied").display());
    let at = listed.find(&entry).unwrap_or_else(|| panic!("{listed}"));
    assert!(
        listed[at..].contains("branch refs/heads/agent/copied"),
        "{listed}"
    );
    let status = world.git_in(&world.worktree("copied"), &["status", "--porcelain"]);
    assert!(
        status.contains(" M src/a.txt") && status.contains(" D src/b.txt"),
        "{status}"
    );
    assert!(
        !status.contains("empty.txt") && !status.contains("old-link"),
        "{status}"
    );
    // Its untouched files share their blocks with the cached tree's.
    let shared = std::process::Command::new("filefrag")
        .arg("-v")
        .arg(world.worktree("copied").join("src/d.txt"))
        .output()
        .unwrap();
    let shared = String::from_utf8_lossy(&shared.stdout);
    assert!(shared.contains("shared"), "{shared}");
    // A second task on the base copies the same cached tree: nothing is checked out again.
    let second = world.ganger(&["start", "second", "--message", "change"]);
    second.expect_code(0);
    assert_eq!(tree_of(&world, "second").as_deref(), Some("reflink"));
    assert_eq!(cached(&world), [head]);
}

#[test]
fn a_round_in_a_reflink_copy_ends_as_in_a_checked_out_worktree() {
    let Some(fs) = scratch_fs::xfs(300) else {
        return;
    };
    let world = cache_world(&fs.dir, "max = 0");
    world
        .ganger(&["start", "plain", "--message", "change"])
        .expect_code(0);
    assert_eq!(tree_of(&world, "plain").as_deref(), Some("checkout"));
    set_trees(&world, "max = 1");
    world
        .ganger(&["start", "copied", "--message", "change"])
        .expect_code(0);
    assert_eq!(tree_of(&world, "copied").as_deref(), Some("reflink"));
    let changes = [
        "moved.txt",
        "new mode",
        "deleted file",
        "src/link",
        "nest/n.txt",
    ];
    crate::tree_ends::assert_same_ends(&world, "copied", "plain", &changes);
}

#[test]
fn a_modified_cached_tree_is_made_again_never_used() {
    let Some(fs) = scratch_fs::xfs(300) else {
        return;
    };
    let world = cache_world(&fs.dir, "max = 1");
    let fill = world.ganger(&["trees", "fill", "--json"]);
    fill.expect_code(0);
    assert_eq!(fill.json()["cached_made"], 1);
    let head = world.git(&["rev-parse", "HEAD"]);
    let cached_file = world
        .repo
        .join(".ganger/trees/cache")
        .join(&head)
        .join("tree/src/d.txt");
    // Changed in place, same size, by a person who unsealed it first: only its times tell.
    let entry = cached_file.ancestors().nth(3).unwrap().to_owned();
    crate::tree_overlay::unseal_tree_by_hand(&entry);
    std::fs::write(&cached_file, "D\n").unwrap();
    world
        .ganger(&["start", "after", "--message", "change"])
        .expect_code(0);
    assert_eq!(tree_of(&world, "after").as_deref(), Some("reflink"));
    let copied = world.worktree("after").join("src/d.txt");
    assert_eq!(std::fs::read_to_string(copied).unwrap(), "d\n");
    assert_eq!(std::fs::read_to_string(&cached_file).unwrap(), "d\n");
    // `trees fill` finds a file added by hand and makes the tree again.
    crate::tree_overlay::unseal_tree_by_hand(&entry);
    std::fs::write(cached_file.with_file_name("added.txt"), "x\n").unwrap();
    let fill = world.ganger(&["trees", "fill", "--json"]);
    fill.expect_code(0);
    assert_eq!(fill.json()["cached_made"], 1, "{}", fill.stdout);
    assert!(!cached_file.with_file_name("added.txt").exists());
}

#[test]
fn a_made_cached_tree_is_read_only_and_goes_with_no_mount_left() {
    let Some(fs) = scratch_fs::xfs(300) else {
        return;
    };
    let world = cache_world(&fs.dir, "max = 1");
    world.ganger(&["trees", "fill"]).expect_code(0);
    let cache = world.repo.join(".ganger/trees/cache");
    let first = cache.join(world.git(&["rev-parse", "HEAD"]));
    let sealed = |entry: &Path| vec![entry.join("tree"), entry.join("index")];
    assert_eq!(crate::tree_overlay::mounts_under(&cache), sealed(&first));
    for written in [
        std::fs::write(first.join("tree/src/a.txt"), "changed\n"),
        std::fs::write(first.join("tree/new.txt"), "new\n"),
        std::fs::write(first.join("index"), "broken"),
    ] {
        assert_eq!(written.unwrap_err().raw_os_error(), Some(30), "not EROFS");
    }
    // The seal gone as after a reboot: the next use reads the stamp, finds the tree good and
    // seals it again.
    for part in sealed(&first) {
        let out = std::process::Command::new("umount")
            .arg(part)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    assert!(crate::tree_overlay::mounts_under(&cache).is_empty());
    let fill = world.ganger(&["trees", "fill", "--json"]);
    fill.expect_code(0);
    assert_eq!(fill.json()["cached_made"], 0, "{}", fill.stdout);
    assert_eq!(crate::tree_overlay::mounts_under(&cache), sealed(&first));
    // A local task's reflink copy is made from the sealed tree.
    world
        .ganger(&["start", "copied", "--message", "change"])
        .expect_code(0);
    assert_eq!(tree_of(&world, "copied").as_deref(), Some("reflink"));
    // A new base over `max`: the first is evicted, unsealed, and the new one sealed.
    world.write("later.txt", "later\n");
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "later"]);
    world.ganger(&["trees", "fill"]).expect_code(0);
    let second = cache.join(world.git(&["rev-parse", "HEAD"]));
    assert!(!first.exists());
    assert_eq!(crate::tree_overlay::mounts_under(&cache), sealed(&second));
    let drained = world.ganger(&["trees", "drain", "--json"]);
    drained.expect_code(0);
    assert_eq!(drained.json()["cached_removed"], 1);
    assert!(crate::tree_overlay::mounts_under(&cache).is_empty());
    assert!(!second.exists());
}

#[test]
fn the_least_recently_used_base_goes_over_max_and_over_disk() {
    let Some(fs) = scratch_fs::xfs(300) else {
        return;
    };
    let world = cache_world(&fs.dir, "max = 1");
    world.ganger(&["trees", "fill"]).expect_code(0);
    let first = world.git(&["rev-parse", "HEAD"]);
    world.write("later.txt", "later\n");
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "later"]);
    let second = world.git(&["rev-parse", "HEAD"]);
    world
        .ganger(&["start", "later", "--message", "change"])
        .expect_code(0);
    assert_eq!(cached(&world), std::slice::from_ref(&second));
    // Room for two by count but not by disk: the newest alone stays.
    set_trees(&world, "max = 4\ndisk = \"4k\"");
    world
        .ganger(&["trees", "fill", "--base", &first])
        .expect_code(0);
    assert_eq!(cached(&world), std::slice::from_ref(&first));
    set_trees(&world, "max = 4");
    world.ganger(&["trees", "fill"]).expect_code(0);
    assert_eq!(cached(&world), [first, second]);
    let drained = world.ganger(&["trees", "drain", "--json"]);
    drained.expect_code(0);
    assert_eq!(drained.json()["cached_removed"], 2);
    assert!(cached(&world).is_empty());
}

#[test]
fn a_full_disk_while_a_cached_tree_is_made_is_exit_70_and_leaves_nothing() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    // 2 MB of files that do not compress, into 1 MB.
    let noise: Vec<u8> = (0u32..2 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for part in 0..4 {
        let at = part * (512 << 10);
        std::fs::write(
            world.repo.join(format!("blob-{part}.bin")),
            &noise[at..at + (512 << 10)],
        )
        .unwrap();
    }
    world.git(&["add", "-A"]);
    world.git(&["commit", "-q", "-m", "two megabytes"]);
    world.use_command_agent("true", "", "\n[trees]\nmax = 1\n");
    let Some(_small) = scratch_fs::small_tmpfs(&world.repo.join(".ganger/trees"), 1024) else {
        return;
    };
    let run = world.ganger(&["trees", "fill"]);
    run.expect_code(70);
    assert!(
        run.stderr
            .contains("into the tree cache (0 kB free on its file system)"),
        "{}",
        run.stderr
    );
    let cache = world.repo.join(".ganger/trees/cache");
    let left: Vec<_> = std::fs::read_dir(&cache)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in the cache: {left:?}");
    let used = std::process::Command::new("df")
        .args(["--output=used", "-k"])
        .arg(world.repo.join(".ganger/trees"))
        .output()
        .unwrap();
    let used = String::from_utf8_lossy(&used.stdout);
    let kb: u64 = used.lines().nth(1).unwrap().trim().parse().unwrap();
    assert!(kb < 16, "{kb} kB left on the file system");
}

#[test]
fn a_cache_setting_that_cannot_be_is_refused_and_nothing_is_made() {
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    for (trees, says) in [
        ("max = -1", "max"),
        ("max = 65", "more than the 64"),
        ("max = 1\ndisk = \"lots\"", "trees.disk: not a size"),
        ("max = 1\ndisk = 0", "0 bytes"),
        ("max = 1\ndisk = -5", "trees.disk: not a size"),
        ("disk = \"1g\"", "tree cache is off"),
    ] {
        world.use_command_agent("true", "", &format!("\n[trees]\n{trees}\n"));
        for args in [
            &["start", "bad", "--message", "x"][..],
            &["trees", "fill"][..],
        ] {
            let run = world.ganger(args);
            run.expect_code(2);
            assert!(run.stderr.contains(says), "{trees}: {}", run.stderr);
            assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
        }
        assert!(!world.worktree("bad").exists());
        assert!(!world.repo.join(".ganger/trees").exists());
    }
}

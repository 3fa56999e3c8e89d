//! The overlay for sandboxed tasks (docs/trees.md): with the tree cache on, a bwrap or Docker
//! task's worktree is the base's cached tree below and its own upper folder above, mounted by
//! ganger (as root) at the worktree's path. A sandboxed round on it ends exactly as one in a
//! worktree `git worktree add` made (snapshot, diff, merge) for every kind of change; the
//! cached tree two tasks stand on is never written; `clean` takes the mount and the upper
//! folder with the worktree.
//!
//! Real bubblewrap and real Docker: under `CI=true` a missing engine (or a test run that
//! cannot mount, not being root) fails the test; elsewhere the test says it is skipped.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]
#![allow(
    clippy::disallowed_methods,
    reason = "the test starts a ganger command it kills half way"
)]

use ganger_test_support::World;
use std::path::{Path, PathBuf};

/// Every kind of change a round can make: a change, a deletion, a rename, a new directory, a
/// symlink, a mode change, a directory deleted whole and one deleted and made again (opaque
/// in the upper folder), and (where the sandbox has git: bubblewrap, not the Docker base
/// image) a repository made inside the worktree. A second round finds most of it done and
/// makes the directory again.
const AGENT: &str = "cat >/dev/null; echo round >> src/rounds.txt; echo changed > src/a.txt; rm src/b.txt; \
    mv src/c.txt src/moved.txt; mkdir -p new/deep; echo deep > new/deep/a.txt; \
    ln -s a.txt src/link; chmod +x src/d.txt; rm src/old-link; rm -rf dropped; \
    rm -rf gone; mkdir -p gone/sub; echo again >> src/rounds.txt; cp src/rounds.txt gone/sub/y.txt; echo new > gone/z.txt; \
    if command -v git >/dev/null; then mkdir nest && (cd nest && git init -q && echo n > n.txt && git add n.txt && GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z \
    git -c user.name=t -c user.email=t@t commit -qm n); fi; echo 'DONE: changed eight things'";

/// bubblewrap with ganger run by an unprivileged user: its overlays are mounted by
/// `fuse-overlayfs` (the test itself runs as root, to be that user).
pub(crate) const AS_USER: &str = "bwrap-as-a-user";

/// The sandbox a test's tasks run in.
pub(crate) fn engine(sandbox: &str) -> &str {
    if sandbox == AS_USER { "bwrap" } else { sandbox }
}

fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether `sandbox` can run here and this test may mount; panics on CI when not.
pub(crate) fn available(sandbox: &str, test: &str) -> bool {
    let (uid, gid) = ganger_test_support::UNPRIVILEGED;
    let engine = match sandbox {
        "bwrap" => std::process::Command::new("bwrap")
            .args(["--ro-bind", "/", "/", "--", "/bin/true"])
            .output()
            .is_ok_and(|out| out.status.success()),
        AS_USER => {
            let bwrap = std::process::Command::new("setpriv")
                .args([
                    &format!("--reuid={uid}"),
                    &format!("--regid={gid}"),
                    "--clear-groups",
                ])
                .args(["--", "bwrap", "--ro-bind", "/", "/", "--", "/bin/true"])
                .output()
                .is_ok_and(|out| out.status.success());
            let fuse = ["fuse-overlayfs", "fusermount3"].iter().all(|program| {
                std::process::Command::new("sh")
                    .args(["-c", &format!("command -v {program}")])
                    .output()
                    .is_ok_and(|out| out.status.success())
            });
            let device = std::fs::metadata("/dev/fuse").is_ok();
            bwrap && fuse && device
        }
        _ => {
            if !ganger_test_support::docker_available(test) {
                return false;
            }
            ganger_test_support::ensure_worker_image(
                env!("CARGO_BIN_EXE_ganger").as_ref(),
                "command",
            );
            true
        }
    };
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let root = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        == Some("0");
    if !(engine && root) {
        assert!(
            !on_ci(),
            "{test}: {sandbox} missing ({engine}) or not root ({root}) on CI"
        );
        let line = format!("skipped: {test}: {sandbox} or root is not available here\n");
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
    engine && root
}

/// Unmounts whatever a failed test left mounted under its world, so that no mount outlives it.
pub(crate) struct Unmount(pub(crate) PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        for mount in mounts_under(&self.0) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(mount)
                .output();
        }
    }
}

/// The file system type of the topmost mount at `point` (`overlay`, `fuse.fuse-overlayfs`).
fn mount_type(point: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    text.lines()
        .rev()
        .filter(|line| line.split(' ').nth(4).map(Path::new) == Some(point))
        .filter_map(|line| line.split(" - ").nth(1)?.split(' ').next())
        .map(str::to_owned)
        .next()
}

/// The mount points under `dir`, in mount order.
pub(crate) fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    text.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(PathBuf::from)
        .filter(|mount| mount.starts_with(dir))
        .collect()
}

fn overlay_world(sandbox: &str, trees: &str) -> (World, Unmount) {
    let mut world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    if sandbox == AS_USER {
        world = world.as_user(ganger_test_support::UNPRIVILEGED);
    }
    let guard = Unmount(world.root().to_owned());
    crate::tree_ends::commit_five_files_and_a_link(&world);
    set_trees(&world, sandbox, trees);
    (world, guard)
}

fn set_trees(world: &World, sandbox: &str, trees: &str) {
    world.use_command_agent(
        AGENT,
        "timeout = \"120s\"",
        &format!(
            "\n[sandbox]\ndefault = {:?}\n\n[trees]\n{trees}\n",
            engine(sandbox)
        ),
    );
}

fn start(world: &World, slug: &str) {
    let run = world.ganger(&["start", slug, "--message", "change", "--json"]);
    assert_eq!(
        run.json()["status"],
        "done",
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}

fn tree_of(world: &World, slug: &str) -> Option<String> {
    let run = world.ganger(&["status", slug, "--json"]);
    run.expect_code(0);
    run.json()["tree"].as_str().map(str::to_owned)
}

/// The same scripted round, sandboxed, in a checked-out worktree and on an overlay: the same
/// snapshot tree, the same diff, the same tree once each is merged onto the same main.
fn a_round_on_an_overlay_ends_as_in_a_checked_out_worktree(sandbox: &str) {
    let test = format!("{sandbox}: a_round_on_an_overlay_ends_as_in_a_checked_out_worktree");
    if !available(sandbox, &test) {
        return;
    }
    let (world, _unmount) = overlay_world(sandbox, "max = 0");
    start(&world, "plain");
    assert_eq!(tree_of(&world, "plain").as_deref(), Some("checkout"));
    set_trees(&world, sandbox, "max = 1");
    start(&world, "layered");
    assert_eq!(tree_of(&world, "layered").as_deref(), Some("overlay"));
    let worktree = world.worktree("layered");
    assert!(mounts_under(&worktree).contains(&worktree), "not mounted");
    let by_fuse = mount_type(&worktree).as_deref() == Some("fuse.fuse-overlayfs");
    assert_eq!(by_fuse, sandbox == AS_USER, "{:?}", mount_type(&worktree));
    // A person takes a file out of each worktree's index, not out of its tree: the index is
    // no longer the cached one there, which only the index tells.
    for slug in ["plain", "layered"] {
        world.git_in(
            &world.worktree(slug),
            &["rm", "-q", "--cached", "README.md"],
        );
    }
    // What `clean` counts in each (a `git status` of the overlay's changed paths only).
    let counted = |slug: &str| {
        let run = world.ganger(&["clean", "--force", "--dry-run", slug]);
        run.expect_code(0);
        run.stdout.replace(slug, "SLUG")
    };
    let porcelain = |slug: &str| {
        world.git_in(
            &world.worktree(slug),
            &["status", "--porcelain", "--untracked-files=all"],
        )
    };
    assert_eq!(
        counted("layered"),
        counted("plain"),
        "git status: layered\n{}\nplain\n{}",
        porcelain("layered"),
        porcelain("plain")
    );
    assert!(
        counted("plain").contains("uncommitted"),
        "{}",
        counted("plain")
    );
    // A second round (a snapshot before it, one after it, neither watched) ends the same.
    for slug in ["plain", "layered"] {
        let fix = world.ganger(&["fix", slug, "--message", "again", "--json"]);
        assert_eq!(
            fix.json()["status"],
            "done",
            "{}\n{}",
            fix.stdout,
            fix.stderr
        );
    }
    let round_two =
        |slug: &str| world.git(&["rev-parse", &format!("refs/ganger/{slug}/round-2^{{tree}}")]);
    assert_eq!(round_two("layered"), round_two("plain"));
    let mut changes = vec![
        "moved.txt",
        "new mode",
        "deleted file",
        "src/link",
        "old-link",
        "new/deep/a.txt",
        "dropped/q.txt",
        "gone/x.txt",
        "gone/sub/y.txt",
        "gone/z.txt",
    ];
    if engine(sandbox) == "bwrap" {
        changes.push("nest/n.txt");
    }
    crate::tree_ends::assert_same_ends(&world, "layered", "plain", &changes);
}

/// Two overlay tasks on one base each change, delete and rename files, and one takes a second
/// round and is rewound: the cached tree below them is as it was made (its stamp holds, its
/// files read as the base's), each task sees only its own change, and `clean --force` takes
/// the mounts and the upper folders.
fn the_base_below_two_overlays_is_never_written(sandbox: &str) {
    let test = format!("{sandbox}: the_base_below_two_overlays_is_never_written");
    if !available(sandbox, &test) {
        return;
    }
    let (world, _unmount) = overlay_world(sandbox, "max = 1");
    start(&world, "first");
    world.write("unrelated.txt", "no commit\n");
    start(&world, "second");
    for slug in ["first", "second"] {
        assert_eq!(tree_of(&world, slug).as_deref(), Some("overlay"));
        let status = world.git_in(&world.worktree(slug), &["status", "--porcelain"]);
        assert!(
            status.contains(" M src/a.txt") && status.contains(" D src/b.txt"),
            "{status}"
        );
        assert!(!status.contains("empty.txt"), "{status}");
    }
    // A second round, then `rewind --to 1`: the overlay's files are round 1's again.
    let first = world.worktree("first");
    let after_one = world.git_in(&first, &["status", "--porcelain"]);
    let fix = world.ganger(&["fix", "first", "--message", "again", "--json"]);
    assert_eq!(
        fix.json()["status"],
        "done",
        "{}\n{}",
        fix.stdout,
        fix.stderr
    );
    let rounds = || world.read_file(&first.join("src/rounds.txt"));
    assert_eq!(rounds(), "round\nagain\nround\nagain\n");
    world
        .ganger(&["rewind", "first", "--to", "1"])
        .expect_code(0);
    assert_eq!(rounds(), "round\nagain\n");
    assert_eq!(world.git_in(&first, &["status", "--porcelain"]), after_one);
    let head = world.git(&["rev-parse", "HEAD"]);
    let cached = world
        .repo
        .join(".ganger/trees/cache")
        .join(&head)
        .join("tree");
    assert_eq!(
        std::fs::read_to_string(cached.join("src/a.txt")).unwrap(),
        "a\n"
    );
    assert!(cached.join("src/b.txt").is_file() && cached.join("src/c.txt").is_file());
    assert!(!cached.join("src/moved.txt").exists() && !cached.join("new").exists());
    assert!(!cached.join("src/rounds.txt").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(cached.join("src/d.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0, "{mode:o}");
    // Its stamp (every entry's inode, size and times) still holds: nothing is made again.
    let fill = world.ganger(&["trees", "fill", "--json"]);
    fill.expect_code(0);
    assert_eq!(fill.json()["cached_made"], 0, "{}", fill.stdout);
    // `trees drain` keeps the base the overlays stand on.
    world.ganger(&["trees", "drain"]).expect_code(0);
    assert!(cached.join("src/a.txt").is_file());
    // The change is the upper folder's: a whiteout for the deletion.
    let uppers = world.repo.join(".ganger/trees/upper");
    let upper_count = std::fs::read_dir(&uppers).unwrap().count();
    assert_eq!(upper_count, 2);
    let clean = world.ganger(&["clean", "--force", "first", "second"]);
    clean.expect_code(0);
    for slug in ["first", "second"] {
        let worktree = world.worktree(slug);
        assert!(mounts_under(&worktree).is_empty(), "{}", clean.stdout);
        assert!(!worktree.exists(), "{}", clean.stdout);
    }
    assert_eq!(std::fs::read_dir(&uppers).unwrap().count(), 0);
    let listed = world.git(&["worktree", "list", "--porcelain"]);
    assert!(!listed.contains("repo-agent-first"), "{listed}");
    // Their work was kept before it went.
    world.git(&["rev-parse", "--verify", "refs/ganger/first/cleaned"]);
}

/// A cached tree someone modified after an overlay was made on it is found by the next start
/// (its stamp is read again before the mount) and made again: the new task stands on the
/// base's files, and the first keeps the tree it had until it goes.
fn a_modified_cached_tree_is_made_again_before_an_overlay_stands_on_it(sandbox: &str) {
    let test =
        format!("{sandbox}: a_modified_cached_tree_is_made_again_before_an_overlay_stands_on_it");
    if !available(sandbox, &test) {
        return;
    }
    let (world, _unmount) = overlay_world(sandbox, "max = 1");
    start(&world, "first");
    let head = world.git(&["rev-parse", "HEAD"]);
    let cached = world.repo.join(".ganger/trees/cache").join(&head);
    // Sealed read-only, the tree cannot be written through its path, by root either; a
    // person who unmounts it first can.
    let written = std::fs::write(cached.join("tree/src/empty.txt"), "tampered\n");
    assert_eq!(written.unwrap_err().raw_os_error(), Some(30), "not EROFS");
    unseal_tree_by_hand(&cached);
    std::fs::write(cached.join("tree/src/empty.txt"), "tampered\n").unwrap();
    start(&world, "second");
    assert_eq!(tree_of(&world, "second").as_deref(), Some("overlay"));
    let second = world.worktree("second");
    assert_eq!(
        std::fs::read_to_string(second.join("src/empty.txt")).unwrap(),
        ""
    );
    let status = world.git_in(&second, &["status", "--porcelain"]);
    assert!(!status.contains("empty.txt"), "{status}");
    // The cached tree is the base's again, and its new stamp holds.
    assert_eq!(
        std::fs::read_to_string(cached.join("tree/src/empty.txt")).unwrap(),
        ""
    );
    let fill = world.ganger(&["trees", "fill", "--json"]);
    fill.expect_code(0);
    assert_eq!(fill.json()["cached_made"], 0, "{}", fill.stdout);
    // The first task still reads its own change on the tree it had.
    let first = world.worktree("first");
    assert_eq!(
        std::fs::read_to_string(first.join("src/a.txt")).unwrap(),
        "changed\n"
    );
    // The modified tree moved aside below the first task holds no seal; the one made again
    // is sealed.
    let cache = world.repo.join(".ganger/trees/cache");
    assert_eq!(
        mounts_under(&cache),
        [cached.join("tree"), cached.join("index")]
    );
    world
        .ganger(&["clean", "--force", "first", "second"])
        .expect_code(0);
    assert_eq!(
        mounts_under(world.root()),
        [cached.join("tree"), cached.join("index")]
    );
    // With no overlay on the base any more, the next tree made takes the modified one away.
    world.git(&["commit", "-q", "--allow-empty", "-m", "a new base"]);
    start(&world, "third");
    let left: Vec<String> = std::fs::read_dir(world.repo.join(".ganger/trees/cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let third = world.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        mounts_under(world.root())
            .into_iter()
            .filter(|m| m.starts_with(&cache))
            .collect::<Vec<_>>(),
        [
            cache.join(&third).join("tree"),
            cache.join(&third).join("index")
        ]
    );
}

/// What a person who means to edit a sealed cached tree does: unmounts its read-only mount.
pub(crate) fn unseal_tree_by_hand(entry: &Path) {
    let out = std::process::Command::new("umount")
        .arg(entry.join("tree"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// A reboot takes the overlay down (here: unmounted by hand); the next command that reads the
/// task (`diff`) mounts it again the way it was made, the task's change in it, and a round
/// runs on it.
fn an_overlay_a_reboot_took_down_is_mounted_again_by_the_next_command(sandbox: &str) {
    let test =
        format!("{sandbox}: an_overlay_a_reboot_took_down_is_mounted_again_by_the_next_command");
    if !available(sandbox, &test) {
        return;
    }
    let (world, _unmount) = overlay_world(sandbox, "max = 1");
    start(&world, "rebooted");
    let worktree = world.worktree("rebooted");
    let kind = mount_type(&worktree);
    assert!(kind.is_some(), "not mounted");
    let out = std::process::Command::new("umount")
        .arg(&worktree)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(mount_type(&worktree), None);
    let diff = world.ganger(&["diff", "rebooted"]);
    diff.expect_code(0);
    assert!(diff.stdout.contains("+changed"), "{}", diff.stdout);
    assert_eq!(mount_type(&worktree), kind);
    assert_eq!(world.read_file(&worktree.join("src/a.txt")), "changed\n");
    let fix = world.ganger(&["fix", "rebooted", "--message", "again", "--json"]);
    assert_eq!(fix.json()["status"], "done", "{}", fix.stderr);
    if sandbox == AS_USER {
        // A FUSE overlay's server killed: the mount stays but answers nothing, and the next
        // command makes it again.
        let server = fuse_server_of(&worktree).expect("no fuse-overlayfs serves the overlay");
        let out = std::process::Command::new("kill")
            .args(["-9", &server.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let diff = world.ganger(&["diff", "rebooted"]);
        diff.expect_code(0);
        assert!(diff.stdout.contains("+changed"), "{}", diff.stdout);
        assert_eq!(world.read_file(&worktree.join("src/a.txt")), "changed\n");
        assert_ne!(fuse_server_of(&worktree), Some(server));
    }
}

/// The pid of the `fuse-overlayfs` that serves the overlay at `worktree`.
fn fuse_server_of(worktree: &Path) -> Option<u32> {
    let needle = worktree.as_os_str().as_encoded_bytes();
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .collect();
            let (program, last) = (args.first()?, args.last()?);
            (program.ends_with(b"fuse-overlayfs") && *last == needle).then_some(pid)
        })
}

/// A start killed while paused right after its overlay was mounted (before its task was
/// recorded) is settled by `clean`: the mount, the upper folder, the worktree's record and
/// the branch go.
fn a_start_killed_after_its_overlay_is_settled_by_clean(sandbox: &str) {
    let test = format!("{sandbox}: a_start_killed_after_its_overlay_is_settled_by_clean");
    if !available(sandbox, &test) {
        return;
    }
    let (world, _unmount) = overlay_world(sandbox, "max = 1");
    let worktree = world.worktree("killed");
    let mut start = world.command(&["start", "killed", "--message", "change"]);
    start
        .env("GANGER_FAULT_PAUSE", "start-after-worktree:120000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = start.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let uppers = world.repo.join(".ganger/trees/upper");
    // Mounted, and the start paused after it (its `.git` file is in the merged view).
    while !(mounts_under(&worktree).contains(&worktree) && world.sees_file(&worktree.join(".git")))
    {
        assert!(std::time::Instant::now() < deadline, "no overlay made");
        assert!(child.try_wait().unwrap().is_none(), "the start ended");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let listed = world.ganger(&["status", "--json"]).json();
    assert_eq!(listed["killed_starts"][0]["slug"], "killed", "{listed:#}");
    assert_eq!(std::fs::read_dir(&uppers).unwrap().count(), 1);
    let clean = world.ganger(&["clean"]);
    clean.expect_code(0);
    assert!(mounts_under(&worktree).is_empty(), "{}", clean.stdout);
    assert!(!worktree.exists(), "{}", clean.stdout);
    assert_eq!(std::fs::read_dir(&uppers).unwrap().count(), 0);
    let branches = world.git(&["branch", "--list", "agent/killed"]);
    assert_eq!(branches, "", "{}", clean.stdout);
}

mod bwrap {
    #[test]
    fn a_modified_cached_tree_is_made_again_before_an_overlay_stands_on_it() {
        super::a_modified_cached_tree_is_made_again_before_an_overlay_stands_on_it("bwrap");
    }

    #[test]
    fn a_start_killed_after_its_overlay_is_settled_by_clean() {
        super::a_start_killed_after_its_overlay_is_settled_by_clean("bwrap");
    }

    #[test]
    fn an_overlay_a_reboot_took_down_is_mounted_again_by_the_next_command() {
        super::an_overlay_a_reboot_took_down_is_mounted_again_by_the_next_command("bwrap");
    }

    #[test]
    fn a_round_on_an_overlay_ends_as_in_a_checked_out_worktree() {
        super::a_round_on_an_overlay_ends_as_in_a_checked_out_worktree("bwrap");
    }

    #[test]
    fn the_base_below_two_overlays_is_never_written() {
        super::the_base_below_two_overlays_is_never_written("bwrap");
    }
}

mod docker {
    #[test]
    fn a_round_on_an_overlay_ends_as_in_a_checked_out_worktree() {
        super::a_round_on_an_overlay_ends_as_in_a_checked_out_worktree("docker");
    }

    #[test]
    fn the_base_below_two_overlays_is_never_written() {
        super::the_base_below_two_overlays_is_never_written("docker");
    }
}

mod bwrap_as_a_user {
    #[test]
    fn a_start_killed_after_its_overlay_is_settled_by_clean() {
        super::a_start_killed_after_its_overlay_is_settled_by_clean(super::AS_USER);
    }

    #[test]
    fn an_overlay_a_reboot_took_down_is_mounted_again_by_the_next_command() {
        super::an_overlay_a_reboot_took_down_is_mounted_again_by_the_next_command(super::AS_USER);
    }

    #[test]
    fn a_round_on_an_overlay_ends_as_in_a_checked_out_worktree() {
        super::a_round_on_an_overlay_ends_as_in_a_checked_out_worktree(super::AS_USER);
    }

    #[test]
    fn the_base_below_two_overlays_is_never_written() {
        super::the_base_below_two_overlays_is_never_written(super::AS_USER);
    }
}

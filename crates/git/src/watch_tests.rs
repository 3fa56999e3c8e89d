//! The watch against git's own full look: after every kind of change a round makes, the
//! snapshot of the watched paths is the snapshot of everything; and each case the watch cannot
//! vouch for says so.

use super::*;
use crate::Oid;
use crate::discover::{Repo, discover};
use crate::snapshot::Scope;
use crate::test_repo::{TestRepo, commit_all_in, git_in};
use std::fs;

/// A linked worktree of a repository with a few directories, as ganger makes a task's.
fn worktree() -> (TestRepo, Repo, PathBuf) {
    let repo = TestRepo::new();
    for (path, text) in [
        ("src/a/one.txt", "one\n"),
        ("src/a/two.txt", "two\n"),
        ("src/a-b/three.txt", "three\n"),
        ("docs/guide.md", "guide\n"),
        (".gitignore", "target/\n*.log\n"),
    ] {
        let file = repo.root().join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "tree"]);
    let main = discover(repo.root()).unwrap();
    let path = repo.root().parent().unwrap().join("task");
    let head: Oid = repo.git(&["rev-parse", "HEAD"]);
    main.add_worktree(&path, "agent/task", &head).unwrap();
    let task = main.open_worktree(&path).unwrap();
    (repo, task, path)
}

/// The snapshot of `paths` alone, as a round whose watch vouched for them takes it.
fn snapshot_of_paths(task: &Repo, paths: &BTreeSet<String>) -> crate::Snapshot {
    task.snapshot_of(None, "watched", Scope::Paths { paths, index: None })
        .unwrap()
}

/// The watched snapshot's tree, checked against the full one.
fn same_as_full(task: &Repo, watched: Watched) -> Oid {
    let Watched::Paths(paths) = watched else {
        panic!("the watch should vouch: {watched:?}");
    };
    let fast = snapshot_of_paths(task, &paths);
    let full = task.snapshot(None, "full").unwrap();
    assert!(
        !fast.scanned_everything,
        "git looked at everything: {paths:?}"
    );
    assert_eq!(fast.tree, full.tree, "watched {paths:?}");
    assert_eq!(fast.entries, full.entries);
    fast.tree
}

#[test]
fn every_kind_of_change_is_in_the_watched_snapshot() {
    let (_repo, task, path) = worktree();
    let watch = task.watch_changes(&task.index_entries().unwrap());
    fs::write(path.join("src/a/one.txt"), "one, changed\n").unwrap();
    fs::remove_file(path.join("src/a/two.txt")).unwrap();
    fs::rename(path.join("docs/guide.md"), path.join("docs/manual.md")).unwrap();
    fs::write(path.join("new.txt"), "new\n").unwrap();
    fs::create_dir_all(path.join("fresh/deep/er")).unwrap();
    fs::write(path.join("fresh/deep/er/file.txt"), "deep\n").unwrap();
    fs::write(path.join("made-and-gone.tmp"), "x").unwrap();
    fs::remove_file(path.join("made-and-gone.tmp")).unwrap();
    fs::write(path.join("noise.log"), "ignored\n").unwrap();
    fs::create_dir_all(path.join("target")).unwrap();
    fs::write(path.join("target/out.bin"), "ignored\n").unwrap();
    fs::remove_dir_all(path.join("src/a-b")).unwrap();
    std::os::unix::fs::symlink("src/a/one.txt", path.join("link")).unwrap();
    // A repository the agent made inside the work tree: its files, as a full look keeps them.
    fs::create_dir_all(path.join("src/a/vendored")).unwrap();
    let vendored = path.join("src/a/vendored");
    git_in(&vendored, &["init", "-q", "-b", "main"]);
    fs::write(vendored.join("lib.txt"), "vendored\n").unwrap();
    commit_all_in(&vendored, "v");
    fs::write(vendored.join("later.txt"), "later\n").unwrap();
    same_as_full(&task, watch.finish());
}

#[test]
fn a_mode_change_and_a_file_replaced_by_a_directory_are_seen() {
    use std::os::unix::fs::PermissionsExt;
    let (_repo, task, path) = worktree();
    let watch = task.watch_changes(&task.index_entries().unwrap());
    fs::set_permissions(
        path.join("src/a/one.txt"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    fs::remove_file(path.join("src/a/two.txt")).unwrap();
    fs::create_dir(path.join("src/a/two.txt")).unwrap();
    fs::write(path.join("src/a/two.txt/inside"), "inside\n").unwrap();
    same_as_full(&task, watch.finish());
}

#[test]
fn no_change_is_an_empty_list_and_the_base_tree() {
    let (repo, task, _path) = worktree();
    let watch = task.watch_changes(&task.index_entries().unwrap());
    let seen = watch.finish();
    assert_eq!(seen, Watched::Paths(BTreeSet::new()));
    let tree = same_as_full(&task, seen);
    assert_eq!(tree, repo.git(&["rev-parse", "HEAD^{tree}"]));
}

#[test]
fn what_the_watch_cannot_vouch_for_is_unknown() {
    let (_repo, task, path) = worktree();
    // The index changed (the agent committed): the list no longer applies to it.
    let watch = task.watch_changes(&task.index_entries().unwrap());
    fs::write(path.join("src/a/one.txt"), "committed\n").unwrap();
    git_in(&path, &["commit", "-q", "-am", "by the agent"]);
    assert!(matches!(watch.finish(), Watched::Unknown(why) if why.contains("index")));
    // An ignore file changed: what git takes could change anywhere.
    let watch = task.watch_changes(&task.index_entries().unwrap());
    fs::write(path.join(".gitignore"), "").unwrap();
    assert!(matches!(watch.finish(), Watched::Unknown(why) if why.contains(".gitignore")));
    // A name that is not UTF-8 (the list holds text).
    let watch = task.watch_changes(&task.index_entries().unwrap());
    fs::write(
        path.join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")),
        "bytes\n",
    )
    .unwrap();
    assert!(matches!(watch.finish(), Watched::Unknown(why) if why.contains("UTF-8")));
    // Too many paths.
    let watch = task.watch_changes(&task.index_entries().unwrap());
    for n in 0..=MOST_PATHS {
        fs::write(path.join(format!("f{n}")), "").unwrap();
    }
    assert!(matches!(watch.finish(), Watched::Unknown(why) if why.contains("more than")));
}

/// The whole seconds since the epoch a file was last changed.
fn second_of(path: &Path) -> u64 {
    let changed = fs::metadata(path).unwrap().modified().unwrap();
    changed
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Sleeps until the wall clock's next whole second has begun.
fn until_the_next_second() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    std::thread::sleep(std::time::Duration::from_nanos(
        1_000_000_000 - u64::from(now.subsec_nanos()) + 10_000_000,
    ));
}

#[test]
fn a_same_size_edit_in_the_second_of_the_checkout_is_seen() {
    // Racily clean: the same size and, to the second, the same times as git recorded. git
    // tells it only by reading the file, which it does because the index is as new: the
    // snapshot is taken a second later, when a copy of the index dated now would not be.
    for _attempt in 0..5 {
        until_the_next_second();
        let (_repo, task, path) = worktree();
        let watch = task.watch_changes(&task.index_entries().unwrap());
        fs::write(path.join("src/a/one.txt"), "ONE\n").unwrap();
        let index = git_in(&path, &["rev-parse", "--git-path", "index"]);
        if second_of(&path.join(index)) != second_of(&path.join("src/a/one.txt")) {
            continue; // the checkout took the rest of the second: again
        }
        until_the_next_second();
        let tree = same_as_full(&task, watch.finish());
        let listed = git_in(&path, &["ls-tree", "-r", &tree, "src/a/one.txt"]);
        let blob = listed.split_whitespace().nth(2).unwrap().to_owned();
        assert_eq!(git_in(&path, &["cat-file", "blob", &blob]), "ONE");
        return;
    }
    panic!("no checkout and edit fell in one second in five tries");
}

#[test]
fn a_new_file_right_after_the_checkout_needs_no_look_at_the_rest() {
    let (_repo, task, path) = worktree();
    let watch = task.watch_changes(&task.index_entries().unwrap());
    fs::write(path.join("new.txt"), "new\n").unwrap();
    same_as_full(&task, watch.finish());
}

#[test]
fn a_path_git_refuses_in_the_paths_own_index_gets_the_full_look() {
    // A file inside a repository the index records as a gitlink: git refuses the path ("is
    // in submodule"), in an index of its own as in a whole copy.
    let repo = TestRepo::new();
    let lib = repo.root().join("lib");
    fs::create_dir_all(&lib).unwrap();
    git_in(&lib, &["init", "-q", "-b", "main"]);
    fs::write(lib.join("a.txt"), "a\n").unwrap();
    commit_all_in(&lib, "lib");
    repo.git(&["add", "lib"]);
    repo.git(&["commit", "-q", "-m", "a gitlink"]);
    fs::write(lib.join("new.txt"), "new\n").unwrap();
    let task = discover(repo.root()).unwrap();
    let paths: BTreeSet<String> = ["lib/new.txt".to_owned()].into();
    let watched = snapshot_of_paths(&task, &paths);
    assert!(watched.scanned_everything);
    assert_eq!(watched.tree, task.snapshot(None, "full").unwrap().tree);
}

//! A worktree made directly against one made by `git worktree add`: the same record, listing,
//! index, files, hook and branch; the same refusals; and git's own commands on it.

use crate::test_repo::{TestRepo, git_in};
use std::fs;
use std::path::Path;

/// A `post-checkout` hook that appends its arguments and directory to `log`.
fn hook_logging_to(repo: &TestRepo, log: &Path) {
    let hook = repo.root().join(".git/hooks/post-checkout");
    fs::create_dir_all(hook.parent().unwrap()).unwrap();
    fs::write(
        &hook,
        format!("#!/bin/sh\necho \"$* $(pwd)\" >> {}\n", log.display()),
    )
    .unwrap();
    let mut perms = fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&hook, perms).unwrap();
}

/// The `git worktree list --porcelain` block of the worktree at `path`, its path and branch
/// replaced by `PATH` and `BRANCH`.
fn listed(repo: &TestRepo, path: &Path, branch: &str) -> String {
    let path = path.canonicalize().unwrap();
    let listing = repo.git(&["worktree", "list", "--porcelain"]);
    let block = listing
        .split("\n\n")
        .find(|b| b.lines().next() == Some(&format!("worktree {}", path.display())))
        .unwrap_or_else(|| panic!("{} not listed in:\n{listing}", path.display()));
    block
        .replace(&path.display().to_string(), "PATH")
        .replace(branch, "BRANCH")
}

/// The files of a worktree's record, its name and paths replaced.
fn record(repo: &TestRepo, name: &str, path: &Path, branch: &str) -> Vec<(String, String)> {
    let dir = repo.root().join(".git/worktrees").join(name);
    let mut files: Vec<(String, String)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| !matches!(f.as_str(), "index" | "logs" | "ORIG_HEAD"))
        .map(|f| {
            let text = fs::read_to_string(dir.join(&f)).unwrap_or_else(|_| "(dir)".into());
            let text = text
                .replace(&path.canonicalize().unwrap().display().to_string(), "PATH")
                .replace(branch, "BRANCH");
            (f, text)
        })
        .collect();
    files.sort();
    let dot_git = fs::read_to_string(path.join(".git"))
        .unwrap()
        .replace(name, "NAME");
    files.push((".git".into(), dot_git));
    files
}

#[test]
fn a_worktree_made_directly_is_the_one_git_worktree_add_makes() {
    let repo = TestRepo::new();
    let log = repo.root().parent().unwrap().join("hook.log");
    hook_logging_to(&repo, &log);
    let git = crate::discover(repo.root()).unwrap();
    let base = git.resolve_commit("main").unwrap().unwrap();
    let by_git = repo.root().parent().unwrap().join("by-git");
    let direct = repo.root().parent().unwrap().join("direct");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "agent/by-git",
        by_git.to_str().unwrap(),
        &base,
    ]);
    assert_eq!(
        git.add_worktree_directly(&direct, "agent/direct", &base)
            .unwrap(),
        Some(()),
        "the direct way was not taken"
    );
    assert_eq!(
        listed(&repo, &direct, "agent/direct"),
        listed(&repo, &by_git, "agent/by-git")
    );
    assert_eq!(
        record(&repo, "direct", &direct, "agent/direct"),
        record(&repo, "by-git", &by_git, "agent/by-git")
    );
    for dir in [&by_git, &direct] {
        assert_eq!(git_in(dir, &["status", "--porcelain", "--ignored"]), "");
        assert_eq!(
            fs::read_to_string(dir.join("src/lib.txt")).unwrap(),
            "lib\n"
        );
    }
    assert_eq!(
        git_in(&direct, &["ls-files", "-s"]),
        git_in(&by_git, &["ls-files", "-s"])
    );
    assert_eq!(
        repo.git(&["rev-parse", "agent/direct"]),
        repo.git(&["rev-parse", "agent/by-git"])
    );
    // The hook ran once for each, with the same arguments, in the new worktree.
    let hooks = fs::read_to_string(&log).unwrap();
    let none = "0".repeat(base.len());
    assert_eq!(
        hooks,
        format!(
            "{none} {base} 1 {}\n{none} {base} 1 {}\n",
            by_git.canonicalize().unwrap().display(),
            direct.canonicalize().unwrap().display()
        )
    );
    // git's own commands take it as theirs: a prune keeps it, a remove removes it.
    repo.git(&["worktree", "prune"]);
    assert!(repo.root().join(".git/worktrees/direct").is_dir());
    let opened = git.open_worktree(&direct).unwrap();
    assert_eq!(opened.branch().as_deref(), Some("agent/direct"));
    repo.git(&["worktree", "remove", direct.to_str().unwrap()]);
    assert!(!direct.exists());
    assert!(!repo.root().join(".git/worktrees/direct").exists());
}

#[test]
fn an_existing_branch_a_bad_base_or_a_full_directory_is_refused_and_nothing_is_left() {
    let repo = TestRepo::new();
    let git = crate::discover(repo.root()).unwrap();
    let base = git.resolve_commit("main").unwrap().unwrap();
    repo.git(&["branch", "taken"]);
    let parent = repo.root().parent().unwrap().to_path_buf();
    let path = parent.join("wt");
    let taken = git.add_worktree(&path, "taken", &base).unwrap_err();
    assert!(taken.to_string().contains("already exists"), "{taken}");
    let tree = repo.git(&["rev-parse", "main^{tree}"]);
    let not_a_commit = git.add_worktree(&path, "agent/x", &tree).unwrap_err();
    assert!(!not_a_commit.to_string().is_empty());
    let bad = git.add_worktree(&path, "bad..name", &base).unwrap_err();
    assert!(bad.to_string().contains("not a valid branch name"), "{bad}");
    assert!(!path.exists());
    assert!(!repo.root().join(".git/worktrees").join("wt").exists());
    assert_eq!(repo.git(&["rev-parse", "taken"]), base);
    assert_eq!(repo.git(&["branch", "--list", "agent/x", "bad*"]), "");
    fs::create_dir_all(&path).unwrap();
    fs::write(path.join("mine.txt"), "mine\n").unwrap();
    let full = git.add_worktree(&path, "agent/y", &base).unwrap_err();
    assert!(full.to_string().contains("exists already"), "{full}");
    assert_eq!(fs::read_to_string(path.join("mine.txt")).unwrap(), "mine\n");
    assert!(!path.join(".git").exists());
    assert_eq!(repo.git(&["worktree", "list"]).lines().count(), 1);
}

#[test]
fn a_taken_record_name_is_counted_on_as_git_does_and_a_missing_worktree_is_refused() {
    let repo = TestRepo::new();
    let git = crate::discover(repo.root()).unwrap();
    let base = git.resolve_commit("main").unwrap().unwrap();
    let parent = repo.root().parent().unwrap().to_path_buf();
    let first = parent.join("a/wt");
    let second = parent.join("b/wt");
    git.add_worktree(&first, "agent/one", &base).unwrap();
    git.add_worktree(&second, "agent/two", &base).unwrap();
    assert_eq!(
        crate::Repo::worktree_record_name(&second).as_deref(),
        Some("wt1")
    );
    // Its files deleted by hand, not pruned: git refuses the path, and so does this.
    fs::remove_dir_all(&first).unwrap();
    let missing = git.add_worktree(&first, "agent/three", &base).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("missing but already registered"),
        "{missing}"
    );
    assert!(!first.exists());
    assert_eq!(repo.git(&["branch", "--list", "agent/three"]), "");
    repo.git(&["worktree", "prune"]);
    git.add_worktree(&first, "agent/three", &base).unwrap();
    assert_eq!(
        crate::Repo::worktree_record_name(&first).as_deref(),
        Some("wt")
    );
}

#[test]
fn a_failing_hook_keeps_the_checked_out_worktree_and_is_an_error_as_with_git() {
    let repo = TestRepo::new();
    let hook = repo.root().join(".git/hooks/post-checkout");
    fs::write(&hook, "#!/bin/sh\nexit 3\n").unwrap();
    let mut perms = fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&hook, perms).unwrap();
    let git = crate::discover(repo.root()).unwrap();
    let base = git.resolve_commit("main").unwrap().unwrap();
    let path = repo.root().parent().unwrap().join("hooked");
    assert!(git.add_worktree(&path, "agent/h", &base).is_err());
    assert_eq!(git_in(&path, &["status", "--porcelain"]), "");
    assert!(!repo.root().join(".git/worktrees/hooked/locked").exists());
    assert_eq!(repo.git(&["rev-parse", "agent/h"]), base);
}

#[test]
fn a_reftable_repository_is_left_to_git_worktree_add() {
    let repo = TestRepo::new();
    let dir = repo.root().parent().unwrap().join("reftable");
    git_in(
        repo.root().parent().unwrap(),
        &[
            "init",
            "-q",
            "--ref-format=reftable",
            "-b",
            "main",
            "reftable",
        ],
    );
    fs::write(dir.join("a.txt"), "a\n").unwrap();
    crate::test_repo::commit_all_in(&dir, "init");
    let git = crate::discover(&dir).unwrap();
    let base = git.resolve_commit("main").unwrap().unwrap();
    let path = dir.parent().unwrap().join("reftable-wt");
    assert_eq!(
        git.add_worktree_directly(&path, "agent/r", &base).unwrap(),
        None
    );
    assert!(!path.exists());
    git.add_worktree(&path, "agent/r", &base).unwrap();
    assert_eq!(git_in(&path, &["branch", "--show-current"]), "agent/r");
    assert_eq!(git_in(&path, &["status", "--porcelain"]), "");
}

#[test]
fn a_relative_hooks_path_is_left_to_git_worktree_add_which_finds_the_hook_in_the_main_checkout() {
    let repo = TestRepo::new();
    let hooks = repo.root().join(".myhooks");
    fs::create_dir_all(&hooks).unwrap();
    let log = repo.root().parent().unwrap().join("hook.log");
    let hook = hooks.join("post-checkout");
    fs::write(&hook, format!("#!/bin/sh\necho ran >> {}\n", log.display())).unwrap();
    let mut perms = fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&hook, perms).unwrap();
    // Untracked: the hook is in the main checkout only, where git's add looks for it.
    repo.git(&["config", "core.hooksPath", ".myhooks"]);
    let git = crate::discover(repo.root()).unwrap();
    let base = git.resolve_commit("main").unwrap().unwrap();
    let path = repo.root().parent().unwrap().join("hooked");
    assert_eq!(
        git.add_worktree_directly(&path, "agent/h", &base).unwrap(),
        None
    );
    git.add_worktree(&path, "agent/h", &base).unwrap();
    assert_eq!(fs::read_to_string(&log).unwrap(), "ran\n");
    assert_eq!(git_in(&path, &["branch", "--show-current"]), "agent/h");
}

/// An add killed after its record was written and before the checkout moved `HEAD` leaves a
/// worktree with nothing on its branch: that one is discarded, record and files; a finished
/// worktree, and a directory whose `.git` names no record here, are left alone.
#[test]
fn a_half_added_worktree_is_discarded_and_a_finished_one_is_not() {
    let repo = TestRepo::new();
    let git = crate::discover(repo.root()).unwrap();
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let half = repo.root().parent().unwrap().join("half-added");
    let registered = git.register_worktree(&half, base.len()).unwrap().unwrap();
    assert!(registered.record.join("locked").exists());
    assert!(git.discard_half_added_worktree(&half).unwrap());
    assert!(!half.exists() && !registered.record.exists());
    assert!(!repo.git(&["worktree", "list"]).contains("half-added"));

    let done = repo.root().parent().unwrap().join("added");
    git.add_worktree(&done, "agent/done", &base).unwrap();
    assert!(!git.discard_half_added_worktree(&done).unwrap());
    assert!(done.join(".git").exists());
    // A directory with a `.git` file of no record of this repository stays.
    let plain = repo.root().parent().unwrap().join("plain");
    fs::create_dir_all(&plain).unwrap();
    fs::write(plain.join(".git"), "gitdir: /nowhere/worktrees/plain\n").unwrap();
    assert!(!git.discard_half_added_worktree(&plain).unwrap());
    assert!(plain.join(".git").exists());
}

/// An add killed before the worktree's `.git` file was written leaves a directory (empty) and
/// perhaps a record naming it: both go; a directory with files in it stays.
#[test]
fn an_add_killed_before_its_dot_git_file_leaves_nothing_once_discarded() {
    let repo = TestRepo::new();
    let git = crate::discover(repo.root()).unwrap();
    let base = repo.git(&["rev-parse", "HEAD"]).trim().to_owned();
    let path = repo.root().parent().unwrap().join("early");
    let registered = git.register_worktree(&path, base.len()).unwrap().unwrap();
    fs::remove_file(path.join(".git")).unwrap();
    assert!(git.discard_half_added_worktree(&path).unwrap());
    assert!(!path.exists() && !registered.record.exists());
    // Killed while the `.git` file was being written: it is there, empty.
    let registered = git.register_worktree(&path, base.len()).unwrap().unwrap();
    fs::write(path.join(".git"), "").unwrap();
    assert!(git.discard_half_added_worktree(&path).unwrap());
    assert!(!path.exists() && !registered.record.exists());

    let kept = repo.root().parent().unwrap().join("kept");
    fs::create_dir_all(&kept).unwrap();
    fs::write(kept.join("notes.txt"), "mine").unwrap();
    assert!(!git.discard_half_added_worktree(&kept).unwrap());
    assert!(kept.join("notes.txt").exists());
}

//! Repositories a worker made inside its worktree (`git init` in `sub/`): `git add -A` records
//! such a directory as a gitlink, a commit id of a repository ganger does not have, so a
//! snapshot kept nothing of its files and a rewind wrote back an empty directory. A snapshot
//! now keeps their files instead: each new nested repository's directory is added as plain
//! files into this repository's objects (git's own `add -A` with the directory as its work
//! tree, so ignore rules and filters apply, and its `.git` is never taken), in place of the
//! gitlink. Submodules the worktree's own index already records stay gitlinks.

use crate::command::Git;
use crate::error::GitError;
use crate::index::{IndexEntry, parse_index};
use std::collections::BTreeSet;
use std::path::Path;

/// The mode of a gitlink (a nested repository's commit) in an index.
const GITLINK: u32 = 0o160000;
/// How deep repositories inside repositories are followed.
const MAX_DEPTH: usize = 4;

/// A gitlink entry standing for the directory `dir`, a repository without a commit, so that
/// [`expand`] puts its files in its place.
pub(crate) fn placeholder(dir: Vec<u8>) -> IndexEntry {
    IndexEntry {
        path: dir,
        mode: GITLINK,
        oid: [0; 20],
    }
}

/// Whether any of `entries` is a gitlink.
pub(crate) fn has_gitlinks(entries: &[IndexEntry]) -> bool {
    entries.iter().any(|e| e.mode == GITLINK)
}

/// Whether any of `entries` is a gitlink the worktree's own index does not record.
pub(crate) fn has_new_nested(entries: &[IndexEntry], recorded: &BTreeSet<Vec<u8>>) -> bool {
    entries
        .iter()
        .any(|e| e.mode == GITLINK && !recorded.contains(&e.path))
}

/// The gitlinks the worktree's own index records (its submodules).
pub(crate) fn recorded_gitlinks(index: &[IndexEntry]) -> BTreeSet<Vec<u8>> {
    index
        .iter()
        .filter(|e| e.mode == GITLINK)
        .map(|e| e.path.clone())
        .collect()
}

/// `entries` with every new nested repository's gitlink replaced by its files, sorted by path
/// as an index is; returns the directories expanded too (their trees must be written anew).
pub(crate) fn expand(
    worktree: &Path,
    git_dir: &Path,
    entries: Vec<IndexEntry>,
    recorded: &BTreeSet<Vec<u8>>,
) -> Result<(Vec<IndexEntry>, Vec<Vec<u8>>), GitError> {
    let mut expanded = Vec::new();
    let out = expand_at(worktree, git_dir, entries, recorded, &[], 0, &mut expanded)?;
    Ok((out, expanded))
}

fn expand_at(
    worktree: &Path,
    git_dir: &Path,
    entries: Vec<IndexEntry>,
    recorded: &BTreeSet<Vec<u8>>,
    prefix: &[u8],
    depth: usize,
    expanded: &mut Vec<Vec<u8>>,
) -> Result<Vec<IndexEntry>, GitError> {
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let mut full = prefix.to_vec();
        full.extend_from_slice(&entry.path);
        if entry.mode != GITLINK || recorded.contains(&full) || depth >= MAX_DEPTH {
            out.push(IndexEntry {
                path: full,
                ..entry
            });
            continue;
        }
        let dir = worktree.join(String::from_utf8_lossy(&full).as_ref());
        let inner = files_of(&dir, git_dir)?;
        full.push(b'/');
        expanded.push(full.clone());
        out.extend(expand_at(
            worktree,
            git_dir,
            inner,
            recorded,
            &full,
            depth + 1,
            expanded,
        )?);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The files of directory `dir` as this repository (`git_dir`) would add them, their blobs
/// written into its objects; paths relative to `dir`.
fn files_of(dir: &Path, git_dir: &Path) -> Result<Vec<IndexEntry>, GitError> {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let temp = git_dir.join(format!(
        "ganger-nested-{}-{}.index",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let added = Git::new(dir)
        .with_env("GIT_DIR", git_dir)
        .with_env("GIT_WORK_TREE", dir)
        .with_env("GIT_INDEX_FILE", &temp)
        .run(["add", "-A", "--ignore-errors", "."]);
    let read = added.and_then(|_| {
        let data = std::fs::read(&temp).map_err(|e| GitError::io(&temp, e));
        data.and_then(|d| parse_index(&d).map_err(|what| GitError::format(&temp, what)))
    });
    let _ = std::fs::remove_file(&temp);
    match read {
        Ok(entries) => Ok(entries),
        // Nothing to add (an empty repository) leaves no index behind.
        Err(GitError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(Vec::new())
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_repo::{TestRepo, commit_all_in, git_in};

    #[test]
    fn a_repository_made_inside_the_worktree_is_kept_as_its_files() {
        let repo = TestRepo::new();
        let sub = repo.root().join("sub");
        std::fs::create_dir_all(sub.join("deep")).unwrap();
        git_in(&sub, &["init", "-q", "-b", "main"]);
        std::fs::write(sub.join("a.txt"), "a\n").unwrap();
        std::fs::write(sub.join("deep/b.txt"), "b\n").unwrap();
        std::fs::write(sub.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(sub.join("noise.log"), "ignored\n").unwrap();
        commit_all_in(&sub, "inner");
        let found = crate::discover(repo.root()).unwrap();
        let snapshot = found
            .snapshot(Some("refs/ganger/t/round-1"), "round 1")
            .unwrap();
        assert_eq!(
            repo.git(&["ls-tree", "-r", "--name-only", &snapshot.commit]),
            "README.md\nsrc/lib.txt\nsub/.gitignore\nsub/a.txt\nsub/deep/b.txt"
        );
        assert_eq!(
            repo.git(&["show", "refs/ganger/t/round-1:sub/deep/b.txt"]),
            "b"
        );
        assert_eq!(repo.git(&["fsck", "--strict", "--no-dangling"]), "");
        // The worktree itself is untouched: git still sees an untracked nested repository.
        assert_eq!(repo.git(&["status", "--porcelain"]), "?? sub/");
    }

    #[test]
    fn a_repository_without_a_commit_made_inside_the_worktree_is_kept_as_its_files() {
        // git refuses to add it ("does not have a commit checked out"): the snapshot failed,
        // and with it the round and `ganger diff`.
        let repo = TestRepo::new();
        for dir in ["app", "deeper/tool"] {
            let sub = repo.root().join(dir);
            std::fs::create_dir_all(sub.join("src")).unwrap();
            git_in(&sub, &["init", "-q", "-b", "main"]);
            std::fs::write(sub.join("src/main.txt"), "main\n").unwrap();
        }
        std::fs::write(repo.root().join("top.txt"), "top\n").unwrap();
        let found = crate::discover(repo.root()).unwrap();
        let snapshot = found.snapshot(None, "s").unwrap();
        assert_eq!(
            repo.git(&["ls-tree", "-r", "--name-only", &snapshot.commit]),
            "README.md\napp/src/main.txt\ndeeper/tool/src/main.txt\nsrc/lib.txt\ntop.txt"
        );
        assert_eq!(repo.git(&["fsck", "--strict", "--no-dangling"]), "");
    }

    #[test]
    fn submodules_the_index_records_stay_gitlinks() {
        let repo = TestRepo::new();
        let sub = repo.root().join("lib");
        std::fs::create_dir_all(&sub).unwrap();
        git_in(&sub, &["init", "-q", "-b", "main"]);
        std::fs::write(sub.join("x.txt"), "x\n").unwrap();
        commit_all_in(&sub, "inner");
        // Recorded by the worktree's own index, as a submodule is.
        repo.git(&["add", "lib"]);
        let found = crate::discover(repo.root()).unwrap();
        let snapshot = found.snapshot(None, "s").unwrap();
        let listed = repo.git(&["ls-tree", &snapshot.commit, "lib"]);
        assert!(listed.starts_with("160000 commit"), "{listed}");
    }
}

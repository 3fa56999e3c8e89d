//! Snapshots of a work tree, untracked files included, taken without touching its branch, its
//! index or its files: a copy of the index is brought up to date by `git add -A` (git applies
//! the ignore rules, attributes and filters), and the tree and commit objects are then built
//! from that copy in-process and a ref written, so that a snapshot costs one git process.
//! Given the paths that changed (a watch's list), git gets an index of those paths' entries
//! only, and its result takes their place among the others.
//! Repositories this crate cannot write in-process get the same result from `git write-tree`,
//! `git commit-tree` and `git update-ref`.

use crate::command::Git;
use crate::error::GitError;
use crate::index::{CacheTree, IndexEntry, parse_index_and_trees};
use crate::nested;
use crate::objects::{self, Kind};
use crate::{Oid, refs};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The identity written into snapshot commits.
const IDENTITY: &str = "ganger <ganger@localhost>";

/// A snapshot of a work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The snapshot commit (its parent is the work tree's `HEAD`).
    pub commit: Oid,
    /// The snapshot's tree.
    pub tree: Oid,
    /// The work tree's `HEAD` when the snapshot was taken.
    pub head: Option<Oid>,
    /// Every file of the snapshot, sorted by path; `None` where git had to build the snapshot
    /// itself (see the module doc) and the listing is not at hand.
    pub entries: Option<Vec<IndexEntry>>,
    /// Whether git looked at every file of the work tree (always, unless asked for a list of
    /// paths that git then took as given).
    pub scanned_everything: bool,
}

/// How a path differs between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

impl ChangeKind {
    /// The one-letter code `git status --short` uses.
    pub fn letter(self) -> char {
        match self {
            ChangeKind::Added => 'A',
            ChangeKind::Modified => 'M',
            ChangeKind::Deleted => 'D',
        }
    }
}

/// One path that differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeChange {
    pub kind: ChangeKind,
    pub path: String,
}

/// What differs from `before` to `after` (both sorted by path, as the index is).
pub fn diff_entries(before: &[IndexEntry], after: &[IndexEntry]) -> Vec<TreeChange> {
    let mut changes = Vec::new();
    let (mut i, mut j) = (0, 0);
    let change = |kind, entry: &IndexEntry| TreeChange {
        kind,
        path: String::from_utf8_lossy(&entry.path).into_owned(),
    };
    while i < before.len() || j < after.len() {
        match (before.get(i), after.get(j)) {
            (Some(b), Some(a)) if b.path == a.path => {
                if b.oid != a.oid || b.mode != a.mode {
                    changes.push(change(ChangeKind::Modified, a));
                }
                i += 1;
                j += 1;
            }
            (Some(b), Some(a)) if b.path < a.path => {
                changes.push(change(ChangeKind::Deleted, b));
                i += 1;
                let _ = a;
            }
            (Some(_), Some(a)) | (None, Some(a)) => {
                changes.push(change(ChangeKind::Added, a));
                j += 1;
            }
            (Some(b), None) => {
                changes.push(change(ChangeKind::Deleted, b));
                i += 1;
            }
            (None, None) => break,
        }
    }
    changes
}

/// Where a work tree's parts are, for snapshotting.
#[derive(Debug, Clone)]
pub(crate) struct Place<'a> {
    pub worktree: &'a Path,
    pub git_dir: &'a Path,
    pub common_dir: &'a Path,
}

impl Place<'_> {
    fn index(&self) -> PathBuf {
        self.git_dir.join("index")
    }

    fn in_process(&self) -> bool {
        refs::files_backend(self.common_dir) && !sha256(self.common_dir)
    }
}

fn sha256(common_dir: &Path) -> bool {
    fs::read_to_string(common_dir.join("config")).is_ok_and(|config| {
        config
            .to_ascii_lowercase()
            .replace([' ', '\t'], "")
            .contains("objectformat=sha256")
    })
}

/// A temporary copy of the index, removed when dropped.
struct TempIndex(PathBuf);

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Numbers this process's temporary index files.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new temporary index file's name in the work tree's git directory (not made yet).
fn temp_index_path(place: &Place<'_>) -> TempIndex {
    TempIndex(place.git_dir.join(format!(
        "ganger-snapshot-{}-{}.index",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )))
}

/// A temporary copy of the work tree's index, dated as the index is.
fn temp_index(place: &Place<'_>) -> Result<TempIndex, GitError> {
    let temp = temp_index_path(place);
    match fs::copy(place.index(), &temp.0) {
        Ok(_) => date_as_index(place, &temp.0)?,
        // A repository with nothing staged yet has no index: start from an empty one.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(GitError::io(place.index(), e)),
    }
    Ok(temp)
}

/// Gives a copy of the index (or of some of its entries) the index's own time.
///
/// git trusts an entry whose file has the size and times it recorded, unless the file is as
/// new as the index that holds it ("racily clean": changed within the second, or the moment,
/// the index was written, the same size and times tell nothing), and then reads the file. A
/// copy dated now would make such an entry look older than its index: an edit of the same size
/// in the second of a checkout, snapshotted a second later, would be taken as unchanged.
fn date_as_index(place: &Place<'_>, copy: &Path) -> Result<(), GitError> {
    let index = place.index();
    let written = fs::metadata(&index)
        .and_then(|m| m.modified())
        .map_err(|e| GitError::io(&index, e))?;
    fs::OpenOptions::new()
        .write(true)
        .open(copy)
        .and_then(|file| file.set_modified(written))
        .map_err(|e| GitError::io(copy, e))
}

/// Which paths a snapshot looks at.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// Every file of the work tree.
    Everything,
    /// Only `paths` (relative, `/`-separated), the work tree being its index everywhere else:
    /// what a watch of the work tree since its index was written saw change. `index` is that
    /// index's listing, when the caller has it at hand (else it is read).
    Paths {
        paths: &'a BTreeSet<String>,
        index: Option<&'a [IndexEntry]>,
    },
}

/// Snapshots the work tree and points `ref_name` (if any) at the snapshot commit.
pub(crate) fn take(
    place: &Place<'_>,
    ref_name: Option<&str>,
    message: &str,
    scope: Scope<'_>,
) -> Result<Snapshot, GitError> {
    let head = refs::head(place.git_dir, place.common_dir, place.worktree)?;
    let mut scope = scope;
    if let Scope::Paths { paths, .. } = scope
        && place.in_process()
    {
        match add_paths_alone(place, paths)? {
            Alone::Added(entries, trees) => {
                let added = Added {
                    entries,
                    trees,
                    unborn: Vec::new(),
                    scanned_everything: false,
                };
                return finish_in_process(place, ref_name, message, head, added);
            }
            // git would refuse them in a whole copy too: it looks at everything instead.
            Alone::Refused => scope = Scope::Everything,
            Alone::Unreadable => {}
        }
    }
    let temp = temp_index(place)?;
    let git = Git::new(place.worktree).with_env("GIT_INDEX_FILE", &temp.0);
    let (scanned_everything, unborn) = match scope {
        Scope::Everything => (true, add_everything(&git)?),
        Scope::Paths { paths, index } => add_paths(place, &git, &temp, paths, index)?,
    };
    let data = fs::read(&temp.0).map_err(|e| GitError::io(&temp.0, e))?;
    let (tree, commit, entries) = match parse_index_and_trees(&data) {
        Ok((entries, trees)) if place.in_process() => {
            let added = Added {
                entries,
                trees,
                unborn,
                scanned_everything,
            };
            return finish_in_process(place, ref_name, message, head, added);
        }
        _ => {
            let tree = git.text(["write-tree"])?;
            let mut args = vec![
                "commit-tree".to_owned(),
                tree.clone(),
                "-m".into(),
                message.into(),
            ];
            if let Some(parent) = &head {
                args.extend(["-p".to_owned(), parent.clone()]);
            }
            let commit = Git::new(place.worktree)
                .with_env("GIT_AUTHOR_NAME", "ganger")
                .with_env("GIT_AUTHOR_EMAIL", "ganger@localhost")
                .with_env("GIT_COMMITTER_NAME", "ganger")
                .with_env("GIT_COMMITTER_EMAIL", "ganger@localhost")
                .text(&args)?;
            if let Some(name) = ref_name {
                Git::new(place.worktree).run(["update-ref", name, &commit])?;
            }
            (tree, commit, None)
        }
    };
    Ok(Snapshot {
        commit,
        tree,
        head,
        entries,
        scanned_everything,
    })
}

/// A work tree's files as an index lists them once git has added them.
struct Added {
    /// Every file, sorted by path.
    entries: Vec<IndexEntry>,
    /// The trees git still holds valid for them.
    trees: CacheTree,
    /// Repositories without a commit inside the work tree (see `add_everything`).
    unborn: Vec<Vec<u8>>,
    /// Whether git looked at every file.
    scanned_everything: bool,
}

/// Writes the snapshot's trees and commit in-process (and its ref, if any).
fn finish_in_process(
    place: &Place<'_>,
    ref_name: Option<&str>,
    message: &str,
    head: Option<Oid>,
    added: Added,
) -> Result<Snapshot, GitError> {
    let Added {
        mut entries,
        mut trees,
        unborn,
        scanned_everything,
    } = added;
    // A repository without a commit stands for its files as a new nested one does.
    for dir in unborn {
        let at = entries.partition_point(|e| e.path < dir);
        if entries.get(at).is_none_or(|e| e.path != dir) {
            entries.insert(at, nested::placeholder(dir));
        }
    }
    // Repositories the worker made inside the worktree are kept as their files.
    let recorded = if nested::has_gitlinks(&entries) {
        crate::index::read_index(&place.index())
            .map(|index| nested::recorded_gitlinks(&index))
            .unwrap_or_default()
    } else {
        Default::default()
    };
    let entries = if nested::has_new_nested(&entries, &recorded) {
        let (entries, expanded) =
            nested::expand(place.worktree, place.git_dir, entries, &recorded)?;
        // The trees above an expanded directory differ from git's.
        for dir in expanded {
            trees.retain(|path, _| !dir.starts_with(path));
        }
        entries
    } else {
        entries
    };
    let objects_dir = place.common_dir.join("objects");
    let tree = write_tree(&objects_dir, &entries, &trees)?;
    let body = commit_body(&tree, head.as_deref(), message);
    let commit = objects::hex(&objects::write(
        &objects_dir,
        Kind::Commit,
        body.as_bytes(),
    )?);
    if let Some(name) = ref_name {
        refs::write_ref(place.common_dir, place.worktree, name, &commit)?;
    }
    Ok(Snapshot {
        commit,
        tree,
        head,
        entries: Some(entries),
        scanned_everything,
    })
}

/// What became of `git add` of the watched paths into an index of their own.
enum Alone {
    /// The work tree's entries with git's result in place of theirs, and the trees still
    /// valid.
    Added(Vec<IndexEntry>, CacheTree),
    /// git refused a path (other than as ignored).
    Refused,
    /// The index is missing or one this crate does not read.
    Unreadable,
}

/// `git add -A` of `paths` only, into an index of their own: the work tree's index entries
/// at those paths, under them (a directory) and above them (a file or submodule where a
/// directory now is), and nothing else. git then reads and writes a few entries instead of
/// every one (at 30,000 files, 25 ms against 3) and looks at no other file; the result takes
/// their place among the work tree's other entries, whose trees stay valid.
fn add_paths_alone(place: &Place<'_>, paths: &BTreeSet<String>) -> Result<Alone, GitError> {
    let index_file = place.index();
    let data = match fs::read(&index_file) {
        Ok(data) => data,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Alone::Unreadable),
        Err(e) => return Err(GitError::io(&index_file, e)),
    };
    let Ok((entries, mut trees, starts)) = crate::index::parse_index_at(&data) else {
        return Ok(Alone::Unreadable);
    };
    let mut involved = vec![false; entries.len()];
    let mut list = Vec::new();
    for path in paths {
        let file = path.as_bytes();
        let dir = [file, b"/"].concat();
        let mut tracked = false;
        // The path itself, and what lies under it.
        let mut at = entries.partition_point(|e| e.path.as_slice() < file);
        if entries.get(at).is_some_and(|e| e.path == file) {
            involved[at] = true;
            tracked = true;
        }
        at = entries.partition_point(|e| e.path.as_slice() < dir.as_slice());
        while entries.get(at).is_some_and(|e| e.path.starts_with(&dir)) {
            involved[at] = true;
            tracked = true;
            at += 1;
        }
        // A file or submodule where a directory above the path was.
        for (end, _) in file.iter().enumerate().filter(|(_, b)| **b == b'/') {
            let above = &file[..end];
            let at = entries.partition_point(|e| e.path.as_slice() < above);
            if entries.get(at).is_some_and(|e| e.path == above) {
                involved[at] = true;
            }
        }
        // A path gone from the work tree and never in the index (made and removed during the
        // round) is left out: git would refuse it.
        if tracked || fs::symlink_metadata(place.worktree.join(path)).is_ok() {
            list.extend_from_slice(file);
            list.push(0);
        }
    }
    // Whatever the trees above a path and under it held may have changed: a tree stays when
    // no path is under it and none of its directories is a path.
    let changed: std::collections::HashSet<&[u8]> = paths.iter().map(|p| p.as_bytes()).collect();
    let mut above: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
    for path in &changed {
        above.insert(b"");
        for (end, _) in path.iter().enumerate().filter(|(_, b)| **b == b'/') {
            above.insert(&path[..=end]);
        }
    }
    trees.retain(|tree, _| {
        !above.contains(tree.as_slice())
            && !tree
                .iter()
                .enumerate()
                .any(|(end, b)| *b == b'/' && changed.contains(&tree[..end]))
    });
    let keep: Vec<usize> = (0..entries.len()).filter(|&i| involved[i]).collect();
    let Ok(subset) = crate::index::subset_index(&data, &entries, &starts, &keep) else {
        return Ok(Alone::Unreadable);
    };
    let temp = temp_index_path(place);
    fs::write(&temp.0, subset).map_err(|e| GitError::io(&temp.0, e))?;
    date_as_index(place, &temp.0)?;
    if !list.is_empty() {
        let git = Git::new(place.worktree).with_env("GIT_INDEX_FILE", &temp.0);
        match add_listed(&git, &list) {
            Ok(()) => {}
            Err(GitError::Command { .. }) => return Ok(Alone::Refused),
            Err(other) => return Err(other),
        }
    }
    let added = fs::read(&temp.0).map_err(|e| GitError::io(&temp.0, e))?;
    let Ok((now, _)) = parse_index_and_trees(&added) else {
        return Ok(Alone::Unreadable);
    };
    // The untouched entries and git's result, in index order (no path is in both: git only
    // wrote paths at or under the ones given, whose entries it was given).
    let mut merged = Vec::with_capacity(entries.len() - keep.len() + now.len());
    let mut now = now.into_iter().peekable();
    for (entry, involved) in entries.into_iter().zip(involved) {
        if involved {
            continue;
        }
        while let Some(next) = now.next_if(|n| n.path < entry.path) {
            merged.push(next);
        }
        merged.push(entry);
    }
    merged.extend(now);
    Ok(Alone::Added(merged, trees))
}

/// `git add -A` of the NUL-separated paths in `list`, taken literally; a path git leaves out
/// as ignored is not an error (it says so, and that is all it says).
fn add_listed(git: &Git, list: &[u8]) -> Result<(), GitError> {
    let added = git
        .clone()
        .with_env("GIT_LITERAL_PATHSPECS", "1")
        .run_with_input(
            [
                "add",
                "-A",
                "--ignore-errors",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ],
            Some(list),
        );
    match added {
        Err(GitError::Command { stderr, .. }) if only_ignored(&stderr) => Ok(()),
        other => other.map(|_| ()),
    }
}

/// `git add -A` of `paths` only; whether git looked at everything instead. A path that is
/// neither in the work tree nor under an entry of the index (a file made and removed during
/// the round) is left out, as git would refuse it, and an ignored one is left out by git (it
/// says so, and that is all it says); when git refuses anything else (a path inside a nested
/// repository), everything is looked at.
fn add_paths(
    place: &Place<'_>,
    git: &Git,
    temp: &TempIndex,
    paths: &BTreeSet<String>,
    index: Option<&[IndexEntry]>,
) -> Result<(bool, Vec<Vec<u8>>), GitError> {
    if paths.is_empty() {
        return Ok((false, Vec::new()));
    }
    let read;
    let indexed: &[IndexEntry] = match index {
        Some(index) => index,
        None => {
            read = crate::index::read_index(&temp.0).unwrap_or_default();
            &read
        }
    };
    // A file of the index, or a directory holding one (`a/` sorts after `a-b`: look for it).
    let known = |path: &str| {
        let file = path.as_bytes();
        let dir = [file, b"/"].concat();
        let at = indexed.partition_point(|e| e.path.as_slice() < file);
        let below = indexed.partition_point(|e| e.path.as_slice() < dir.as_slice());
        indexed.get(at).is_some_and(|e| e.path == file)
            || indexed.get(below).is_some_and(|e| e.path.starts_with(&dir))
    };
    let index_second =
        fs::metadata(place.index()).map_or(i64::MAX, |m| std::os::unix::fs::MetadataExt::mtime(&m));
    let mut list = Vec::new();
    let mut all_newer = true;
    for path in paths {
        let on_disk = fs::symlink_metadata(place.worktree.join(path));
        let tracked = known(path);
        if on_disk.is_ok() || tracked {
            list.extend_from_slice(path.as_bytes());
            list.push(0);
        }
        if tracked && let Ok(meta) = &on_disk {
            all_newer &= std::os::unix::fs::MetadataExt::mtime(meta) > index_second;
        }
    }
    if list.is_empty() {
        return Ok((false, Vec::new()));
    }
    if all_newer {
        settle_racy_entries(&temp.0, index_second);
    }
    match add_listed(git, &list) {
        Ok(()) => Ok((false, Vec::new())),
        Err(_) => Ok((true, add_everything(git)?)),
    }
}

/// `git add -A` of the whole work tree; returns the repositories without a commit inside it,
/// which git refuses to add ("does not have a commit checked out": an agent's `git init` in a
/// new directory), added around so that the snapshot can hold their files.
fn add_everything(git: &Git) -> Result<Vec<Vec<u8>>, GitError> {
    let mut unborn: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut args = vec!["add", "-A", "--ignore-errors", "--", "."]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
        args.extend(
            unborn
                .iter()
                .map(|dir| format!(":(exclude,literal){}", String::from_utf8_lossy(dir))),
        );
        match git.run(&args) {
            Ok(_) => return Ok(unborn),
            Err(error) => {
                let found = match &error {
                    GitError::Command { stderr, .. } => unborn_repositories(stderr),
                    _ => Vec::new(),
                };
                if found.is_empty() || found.iter().any(|dir| unborn.contains(dir)) {
                    return Err(error);
                }
                unborn.extend(found);
            }
        }
    }
}

/// The directories git names as repositories without a commit.
fn unborn_repositories(stderr: &str) -> Vec<Vec<u8>> {
    stderr
        .lines()
        .filter_map(|line| {
            let quoted = line
                .strip_prefix("error: '")?
                .strip_suffix("' does not have a commit checked out")?;
            Some(quoted.trim_end_matches('/').as_bytes().to_vec())
        })
        .filter(|dir| !dir.is_empty())
        .collect()
}

/// Dates the copied index a second after the work tree's index, when it would otherwise be of
/// the same second (a round shorter than a second after its worktree was checked out).
///
/// git holds an entry whose file is as new as the index "racily clean" and, whenever it writes
/// that index, reads the file again to be sure: right after a checkout that is every file (at
/// 30,000 files, 120 MB read and hashed for one changed path). Here the watch vouches that no
/// file but the listed ones changed since the index was written, and every listed file that
/// the index holds is newer than it (the caller checks), so git's look at its size and time
/// tells a change: nothing is racy. The copy is removed after the snapshot.
fn settle_racy_entries(copy: &Path, index_second: i64) {
    let Ok(second) = u64::try_from(index_second.saturating_add(1)) else {
        return;
    };
    let later = UNIX_EPOCH + std::time::Duration::from_secs(second);
    if SystemTime::now() >= later {
        return;
    }
    if let Ok(file) = fs::OpenOptions::new().write(true).open(copy) {
        let _ = file.set_modified(later);
    }
}

/// Whether git's complaint is only that some paths given are ignored (it added the rest).
fn only_ignored(stderr: &str) -> bool {
    stderr.starts_with("The following paths are ignored by one of your .gitignore files:")
        && !stderr
            .lines()
            .any(|line| line.starts_with("error:") || line.starts_with("fatal:"))
}

fn commit_body(tree: &str, parent: Option<&str>, message: &str) -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut body = format!("tree {tree}\n");
    if let Some(parent) = parent {
        body.push_str(&format!("parent {parent}\n"));
    }
    body.push_str(&format!(
        "author {IDENTITY} {seconds} +0000\ncommitter {IDENTITY} {seconds} +0000\n\n{}\n",
        message.trim_end()
    ));
    body
}

/// Writes the trees for `entries` (sorted by path) and returns the root tree's id. A
/// directory whose tree git still holds valid in the index's cache tree (`trees`) is taken
/// from there, unwritten: after a round that changed a few files, only the trees above them
/// are written, whatever the size of the repository.
fn write_tree(
    objects_dir: &Path,
    entries: &[IndexEntry],
    trees: &CacheTree,
) -> Result<Oid, GitError> {
    let (oid, _) = write_subtree(objects_dir, entries, 0, trees)?;
    Ok(objects::hex(&oid))
}

/// Writes the tree of the entries sharing a directory prefix of `depth` bytes; returns its id
/// and how many entries it used. Index order is git's tree order once a directory sorts as if
/// its name ended in `/`, which is exactly where its entries fall in the index.
fn write_subtree(
    objects_dir: &Path,
    entries: &[IndexEntry],
    depth: usize,
    trees: &CacheTree,
) -> Result<([u8; 20], usize), GitError> {
    let prefix = entries.first().map_or(&[][..], |e| &e.path[..depth]);
    if let Some((oid, count)) = trees.get(prefix)
        && *count == entries.len()
    {
        return Ok((*oid, *count));
    }
    let mut content = Vec::new();
    let mut used = 0;
    while used < entries.len() {
        let entry = &entries[used];
        let rest = &entry.path[depth..];
        match rest.iter().position(|&b| b == b'/') {
            None => {
                content.extend_from_slice(format!("{:o} ", entry.mode).as_bytes());
                content.extend_from_slice(rest);
                content.push(0);
                content.extend_from_slice(&entry.oid);
                used += 1;
            }
            Some(slash) => {
                let name = &rest[..slash];
                let prefix_len = depth + slash + 1;
                let prefix = &entry.path[..prefix_len];
                let count = entries[used..]
                    .iter()
                    .take_while(|e| e.path.starts_with(prefix))
                    .count();
                let (oid, _) =
                    write_subtree(objects_dir, &entries[used..used + count], prefix_len, trees)?;
                content.extend_from_slice(b"40000 ");
                content.extend_from_slice(name);
                content.push(0);
                content.extend_from_slice(&oid);
                used += count;
            }
        }
    }
    Ok((objects::write(objects_dir, Kind::Tree, &content)?, used))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::{TestRepo, git_in};

    fn place(root: &Path) -> (PathBuf, PathBuf) {
        (root.join(".git"), root.join(".git"))
    }

    fn snap(repo: &TestRepo, name: Option<&str>) -> Snapshot {
        let (git_dir, common_dir) = place(repo.root());
        take(
            &Place {
                worktree: repo.root(),
                git_dir: &git_dir,
                common_dir: &common_dir,
            },
            name,
            "snapshot",
            Scope::Everything,
        )
        .unwrap()
    }

    #[test]
    fn a_snapshot_holds_untracked_and_deleted_files_and_leaves_the_index_alone() {
        let repo = TestRepo::new();
        std::fs::write(repo.root().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(repo.root().join("target")).unwrap();
        std::fs::write(repo.root().join("target/out.bin"), "ignored").unwrap();
        std::fs::write(repo.root().join("new.txt"), "new\n").unwrap();
        std::fs::write(repo.root().join("src/lib.txt"), "changed\n").unwrap();
        std::fs::remove_file(repo.root().join("README.md")).unwrap();
        let status_before = repo.git(&["status", "--porcelain"]);
        let head_before = repo.git(&["rev-parse", "HEAD"]);

        let snapshot = snap(&repo, Some("refs/ganger/t/round-1"));

        assert_eq!(repo.git(&["status", "--porcelain"]), status_before);
        assert_eq!(repo.git(&["rev-parse", "HEAD"]), head_before);
        assert_eq!(
            repo.git(&["rev-parse", "refs/ganger/t/round-1"]),
            snapshot.commit
        );
        assert_eq!(
            repo.git(&["rev-parse", "refs/ganger/t/round-1^"]),
            head_before
        );
        assert_eq!(
            repo.git(&["ls-tree", "-r", "--name-only", "refs/ganger/t/round-1"]),
            ".gitignore\nnew.txt\nsrc/lib.txt"
        );
        assert_eq!(
            repo.git(&["show", "refs/ganger/t/round-1:src/lib.txt"]),
            "changed"
        );
        assert_eq!(repo.git(&["fsck", "--strict", "--no-dangling"]), "");
        let changes = diff_entries(
            &crate::read_index(&repo.root().join(".git/index")).unwrap(),
            snapshot.entries.as_ref().unwrap(),
        );
        let listed: Vec<String> = changes
            .iter()
            .map(|c| format!("{} {}", c.kind.letter(), c.path))
            .collect();
        assert_eq!(
            listed,
            ["A .gitignore", "D README.md", "A new.txt", "M src/lib.txt"]
        );
    }

    #[test]
    fn in_process_trees_equal_gits_own_write_tree() {
        let repo = TestRepo::new();
        // Names that sort differently as files and as directories, modes, symlinks, nesting.
        for path in [
            "a-b",
            "a.txt",
            "a/b",
            "a/c/d",
            "a0",
            "z/y/x/w",
            "b/",
            "space name",
        ] {
            let full = repo.root().join(path);
            if path.ends_with('/') {
                std::fs::create_dir_all(&full).unwrap();
                std::fs::write(full.join("inner"), path).unwrap();
            } else {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, path).unwrap();
            }
        }
        std::os::unix::fs::symlink("a.txt", repo.root().join("link")).unwrap();
        let script = repo.root().join("run.sh");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let snapshot = snap(&repo, None);
        repo.git(&["add", "-A"]);
        assert_eq!(snapshot.tree, repo.git(&["write-tree"]));
    }

    #[test]
    fn a_linked_worktree_snapshot_lands_in_the_common_repository() {
        let repo = TestRepo::new();
        let linked = repo.linked_worktree("agent/x");
        std::fs::write(linked.join("work.txt"), "work\n").unwrap();
        let found = crate::discover(&linked).unwrap();
        let snapshot = take(
            &Place {
                worktree: &found.worktree,
                git_dir: &found.git_dir,
                common_dir: &found.common_dir,
            },
            Some("refs/ganger/x/round-1"),
            "round 1",
            Scope::Everything,
        )
        .unwrap();
        assert_eq!(
            repo.git(&["rev-parse", "refs/ganger/x/round-1"]),
            snapshot.commit
        );
        assert_eq!(git_in(&linked, &["status", "--porcelain"]), "?? work.txt");
        assert_eq!(
            repo.git(&["show", "refs/ganger/x/round-1:work.txt"]),
            "work"
        );
    }

    #[test]
    fn diff_entries_merges_two_sorted_listings() {
        let entry = |path: &str, byte: u8| IndexEntry {
            path: path.as_bytes().to_vec(),
            mode: 0o100644,
            oid: [byte; 20],
        };
        let before = [entry("a", 1), entry("b", 1), entry("d", 1)];
        let after = [entry("b", 2), entry("c", 1), entry("d", 1), entry("e", 1)];
        let changes: Vec<String> = diff_entries(&before, &after)
            .iter()
            .map(|c| format!("{}{}", c.kind.letter(), c.path))
            .collect();
        assert_eq!(changes, ["Da", "Mb", "Ac", "Ae"]);
    }

    /// The loose objects of a repository, by id.
    fn loose_objects(repo: &TestRepo) -> std::collections::BTreeSet<String> {
        let mut found = std::collections::BTreeSet::new();
        for dir in std::fs::read_dir(repo.root().join(".git/objects")).unwrap() {
            let dir = dir.unwrap();
            let name = dir.file_name().to_string_lossy().into_owned();
            if name.len() != 2 {
                continue;
            }
            for object in std::fs::read_dir(dir.path()).unwrap() {
                found.insert(format!(
                    "{name}{}",
                    object.unwrap().file_name().to_string_lossy()
                ));
            }
        }
        found
    }

    #[test]
    fn trees_git_holds_valid_are_reused_and_only_changed_ones_are_written() {
        let repo = TestRepo::new();
        // Files older than the index (as after a checkout), so that git trusts its stat data
        // (a file as new as the index is "racily clean" and re-read, which invalidates trees).
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        for dir in ["a", "b/c", "d"] {
            std::fs::create_dir_all(repo.root().join(dir)).unwrap();
            std::fs::write(repo.root().join(dir).join("f.txt"), dir).unwrap();
        }
        for file in [
            "a/f.txt",
            "b/c/f.txt",
            "d/f.txt",
            "README.md",
            "src/lib.txt",
        ] {
            std::fs::File::options()
                .write(true)
                .open(repo.root().join(file))
                .unwrap()
                .set_modified(past)
                .unwrap();
        }
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "dirs"]);
        // Everything packed: a tree written again would show up as a loose object.
        repo.git(&["gc", "-q", "--prune=now"]);
        let kind = |oid: &str| repo.git(&["cat-file", "-t", oid]);
        let packed = loose_objects(&repo);
        let unchanged = snap(&repo, None);
        assert_eq!(unchanged.tree, repo.git(&["rev-parse", "HEAD^{tree}"]));
        let written: Vec<String> = loose_objects(&repo).difference(&packed).cloned().collect();
        // git's `add -A` invalidates the root's entry, so the root tree is written again.
        let trees = written.iter().filter(|o| kind(o) == "tree").count();
        assert!(
            trees <= 1,
            "an unchanged worktree's snapshot wrote trees: {written:?}"
        );
        let before = loose_objects(&repo);
        std::fs::write(repo.root().join("b/c/f.txt"), "changed").unwrap();
        let snapshot = snap(&repo, None);
        let written: Vec<String> = loose_objects(&repo).difference(&before).cloned().collect();
        let trees: Vec<&String> = written.iter().filter(|o| kind(o) == "tree").collect();
        // b/c, b and the root: the trees of a and d are reused, not written.
        assert_eq!(trees.len(), 3, "{written:?}");
        // The same tree git itself writes.
        let git_tree = {
            let temp = repo.root().join(".git/check.index");
            std::fs::copy(repo.root().join(".git/index"), &temp).unwrap();
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg("git add -A && git write-tree")
                .current_dir(repo.root())
                .env("GIT_INDEX_FILE", &temp)
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).trim().to_owned()
        };
        assert_eq!(snapshot.tree, git_tree);
        assert_eq!(repo.git(&["fsck", "--strict", "--no-dangling"]), "");
    }
}

//! Reading `HEAD` and refs, and writing ganger's own refs, in-process. Only the files backend
//! is read here (loose refs and `packed-refs`); a repository on reftable, or anything this
//! module does not recognise, is answered by the git CLI instead.

use crate::Oid;
use crate::command::Git;
use crate::error::GitError;
use std::fs;
use std::io::Write;
use std::path::Path;

/// Whether the repository keeps its refs in files this module can read and write.
pub(crate) fn files_backend(common_dir: &Path) -> bool {
    !common_dir.join("reftable").exists()
}

/// The commit `HEAD` of the work tree with git directory `git_dir` points at, or `None` on an
/// unborn branch.
pub(crate) fn head(
    git_dir: &Path,
    common_dir: &Path,
    worktree: &Path,
) -> Result<Option<Oid>, GitError> {
    if files_backend(common_dir)
        && let Some(found) = read_head_files(git_dir, common_dir)?
    {
        return Ok(found);
    }
    match Git::new(worktree).text(["rev-parse", "--verify", "-q", "HEAD^{commit}"]) {
        Ok(oid) if is_oid(&oid) => Ok(Some(oid)),
        _ => Ok(None),
    }
}

/// `Some(answer)` when the files answer the question, `None` to ask git.
fn read_head_files(git_dir: &Path, common_dir: &Path) -> Result<Option<Option<Oid>>, GitError> {
    let head_path = git_dir.join("HEAD");
    let text = fs::read_to_string(&head_path).map_err(|e| GitError::io(&head_path, e))?;
    let text = text.trim();
    if is_oid(text) {
        return Ok(Some(Some(text.to_owned())));
    }
    let Some(name) = text.strip_prefix("ref:").map(str::trim) else {
        return Ok(None);
    };
    // Branches live in the common directory; per-worktree refs would be in git_dir.
    for dir in [common_dir, git_dir] {
        if let Ok(value) = fs::read_to_string(dir.join(name)) {
            let value = value.trim();
            return Ok(if is_oid(value) {
                Some(Some(value.to_owned()))
            } else {
                None
            });
        }
    }
    match packed_ref(common_dir, name)? {
        Some(oid) => Ok(Some(Some(oid))),
        // Neither loose nor packed: an unborn branch, or a layout we do not know.
        None => Ok(None),
    }
}

/// What the files say of the full ref `name`: `Some(Some(oid))` it points at a commit,
/// `Some(None)` there is no such ref, `None` the files cannot say (reftable, a symbolic ref,
/// an unreadable value): ask git.
pub(crate) fn read_ref_files(
    common_dir: &Path,
    name: &str,
) -> Result<Option<Option<Oid>>, GitError> {
    if !files_backend(common_dir) {
        return Ok(None);
    }
    let loose = common_dir.join(name);
    match fs::read_to_string(&loose) {
        Ok(value) => {
            let value = value.trim();
            return Ok(is_oid(value).then(|| Some(value.to_owned())));
        }
        // Not there, or a directory of refs (`agent` when `agent/x` exists): not this ref.
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::IsADirectory
                    | std::io::ErrorKind::NotADirectory
            ) => {}
        Err(e) => return Err(GitError::io(&loose, e)),
    }
    Ok(Some(packed_ref(common_dir, name)?))
}

fn packed_ref(common_dir: &Path, name: &str) -> Result<Option<Oid>, GitError> {
    let path = common_dir.join("packed-refs");
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(GitError::io(&path, e)),
    };
    Ok(text.lines().find_map(|line| {
        let (oid, ref_name) = line.split_once(' ')?;
        (ref_name == name && is_oid(oid)).then(|| oid.to_owned())
    }))
}

/// Points `name` (a full ref name under `refs/`) at `oid`, replacing any earlier value.
pub(crate) fn write_ref(
    common_dir: &Path,
    worktree: &Path,
    name: &str,
    oid: &str,
) -> Result<(), GitError> {
    if !files_backend(common_dir) || !name.starts_with("refs/") || name.contains("..") {
        Git::new(worktree).run(["update-ref", name, oid])?;
        return Ok(());
    }
    let path = common_dir.join(name);
    let dir = path
        .parent()
        .ok_or_else(|| GitError::format(&path, "a ref path without a parent"))?;
    fs::create_dir_all(dir).map_err(|e| GitError::io(dir, e))?;
    // git's own protocol: write `NAME.lock` exclusively, then rename it over the ref.
    let lock = path.with_file_name(format!(
        "{}.lock",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .map_err(|e| GitError::io(&lock, e))?;
    // Like git's default (core.fsync leaves refs alone), the ref is not fsynced: a snapshot
    // ref lost in a crash is taken again by the next round, the objects are what matter.
    let written = file.write_all(format!("{oid}\n").as_bytes());
    drop(file);
    if let Err(e) = written.and_then(|()| fs::rename(&lock, &path)) {
        let _ = fs::remove_file(&lock);
        return Err(GitError::io(&path, e));
    }
    Ok(())
}

pub(crate) fn is_oid(text: &str) -> bool {
    text.len() == 40
        && text
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::TestRepo;

    #[test]
    fn head_reads_loose_packed_and_detached_heads_like_git() {
        let repo = TestRepo::new();
        let git_dir = repo.root().join(".git");
        let expected = repo.git(&["rev-parse", "HEAD"]);
        assert_eq!(
            head(&git_dir, &git_dir, repo.root()).unwrap(),
            Some(expected.clone())
        );
        repo.git(&["pack-refs", "--all"]);
        assert!(!git_dir.join("refs/heads/main").exists());
        assert_eq!(
            head(&git_dir, &git_dir, repo.root()).unwrap(),
            Some(expected.clone())
        );
        repo.git(&["checkout", "-q", "--detach"]);
        assert_eq!(
            head(&git_dir, &git_dir, repo.root()).unwrap(),
            Some(expected)
        );
    }

    #[test]
    fn written_refs_are_read_back_by_git() {
        let repo = TestRepo::new();
        let git_dir = repo.root().join(".git");
        let oid = repo.git(&["rev-parse", "HEAD"]);
        write_ref(&git_dir, repo.root(), "refs/ganger/t/round-1", &oid).unwrap();
        write_ref(&git_dir, repo.root(), "refs/ganger/t/round-1", &oid).unwrap();
        assert_eq!(repo.git(&["rev-parse", "refs/ganger/t/round-1"]), oid);
        assert!(!git_dir.join("refs/ganger/t/round-1.lock").exists());
    }

    #[test]
    fn an_unborn_branch_has_no_head() {
        let repo = TestRepo::empty();
        let git_dir = repo.root().join(".git");
        assert_eq!(head(&git_dir, &git_dir, repo.root()).unwrap(), None);
    }
}

//! A repository kept from a remote, as a worker on another host keeps it: cloned once (its
//! own checkout left detached, so that every branch may move under it), fetched before each
//! round (branches under `refs/remotes/origin/`, ganger's snapshot refs `refs/ganger/*` as
//! they are on the remote), and a task's branch and snapshot refs pushed back after each
//! round, in one atomic push whose branch update is leased on what the last fetch saw. Every
//! exchange with the remote is ended once the remote has been silent for a while
//! ([`crate::remote_silence`]).

use crate::command::Git;
use crate::error::GitError;
use std::path::Path;

/// The name the clone gives its remote.
const ORIGIN: &str = "origin";

/// Whether `url` answers as a git repository (`git ls-remote`), run from `dir`.
pub fn check_remote(dir: &Path, url: &str) -> Result<(), GitError> {
    Git::new(dir).run_remote(&["ls-remote", "--heads", "--", url], url)?;
    Ok(())
}

/// Clones `url` into `dir` unless a clone is there already, returning whether it cloned. The
/// clone is made beside `dir` and renamed into place, so that a clone cut short is never
/// taken for a whole one.
pub fn clone_once(url: &str, dir: &Path) -> Result<bool, GitError> {
    if dir.join(".git").exists() {
        return Ok(false);
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| GitError::io(parent, e))?;
    let partial = parent.join(format!(
        ".{}.partial-{}",
        dir.file_name()
            .map_or("clone".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&partial);
    let partial_text = partial.to_string_lossy().into_owned();
    Git::new(parent).run_remote(
        &[
            "clone",
            "--progress",
            "--no-checkout",
            "--origin",
            ORIGIN,
            "--",
            url,
            &partial_text,
        ],
        url,
    )?;
    let git = Git::new(&partial);
    git.run(["config", "gc.auto", "0"])?;
    match std::fs::rename(&partial, dir) {
        Ok(()) => {}
        // Another process cloned it first: theirs is as good.
        Err(_) if dir.join(".git").exists() => {
            let _ = std::fs::remove_dir_all(&partial);
            return Ok(false);
        }
        Err(e) => return Err(GitError::io(dir, e)),
    }
    Ok(true)
}

/// The URL of the remote `dir` was cloned from (`None` for a repository with no `origin`).
pub fn origin_url(dir: &Path) -> Option<String> {
    Git::new(dir)
        .text(["config", "--get", &format!("remote.{ORIGIN}.url")])
        .ok()
        .filter(|url| !url.is_empty())
}

/// Fetches task `slug`'s snapshot refs (`refs/ganger/SLUG/*`) and its `branch` from the remote
/// at `url` into the repository at `dir`, which need not be a clone of it (the checkout a fleet
/// was submitted from): no remote-tracking ref of `dir` is touched. Returns the commit the
/// remote's branch is at, `None` when it has no such branch.
pub fn fetch_task(
    dir: &Path,
    url: &str,
    branch: &str,
    slug: &str,
) -> Result<Option<String>, GitError> {
    let git = Git::new(dir);
    let fetch = |refspec: &str| {
        git.run_remote(
            &["fetch", "--progress", "--no-tags", "--", url, refspec],
            url,
        )
    };
    fetch(&format!("+refs/ganger/{slug}/*:refs/ganger/{slug}/*"))?;
    let heads = git.run_remote(&["ls-remote", "--heads", "--", url, branch], url)?;
    if heads.is_empty() {
        return Ok(None);
    }
    fetch(&format!("refs/heads/{branch}"))?;
    Ok(Some(git.text([
        "rev-parse",
        "--verify",
        "FETCH_HEAD^{commit}",
    ])?))
}

/// Whether a failed push was refused for good: the remote's branch moved since the last
/// fetch (another host pushed a newer round), which trying again cannot change.
pub fn push_refused(error: &GitError) -> bool {
    matches!(error, GitError::Command { stderr, .. }
        if stderr.contains("[rejected]") || stderr.contains("stale info"))
}

/// Fetches every branch (as `refs/remotes/origin/*`) and ganger's refs of every task, then
/// leaves the clone's own checkout detached at the remote's default branch.
pub fn fetch(dir: &Path) -> Result<(), GitError> {
    let git = Git::new(dir);
    let url = origin_url(dir).unwrap_or_else(|| ORIGIN.to_owned());
    git.run_remote(
        &[
            "fetch",
            "--progress",
            // No --prune: it would also drop a snapshot ref made here whose push is still to
            // be tried again.
            "--no-tags",
            ORIGIN,
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/ganger/*:refs/ganger/*",
        ],
        &url,
    )?;
    // The remote's default branch, as `origin/HEAD` named it at the clone (else `main`).
    let head = git
        .text(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"])
        .unwrap_or_else(|_| "refs/remotes/origin/main".into());
    if git.run(["rev-parse", "--verify", "--quiet", &head]).is_ok() {
        git.run(["checkout", "--quiet", "--detach", &head, "--"])?;
    }
    Ok(())
}

/// The commit the remote's `branch` was at the last fetch; `None` when it has no such branch.
pub fn fetched_branch(dir: &Path, branch: &str) -> Option<String> {
    Git::new(dir)
        .text([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/remotes/{ORIGIN}/{branch}^{{commit}}"),
        ])
        .ok()
}

/// Points the local `branch` at the remote's, as the last fetch saw it (the branch must not
/// be checked out anywhere in the clone).
pub fn take_branch(dir: &Path, branch: &str) -> Result<(), GitError> {
    Git::new(dir).run([
        "update-ref",
        &format!("refs/heads/{branch}"),
        &format!("refs/remotes/{ORIGIN}/{branch}"),
    ])?;
    Ok(())
}

/// Pushes `branch` and every ref under `refs/ganger/{slug}/`, all or none. The branch moves
/// only from where the last fetch saw it (or is made, when the remote had none), so that a
/// worker whose round was taken over cannot overwrite the newer round's branch.
pub fn push_task(dir: &Path, branch: &str, slug: &str) -> Result<(), GitError> {
    let lease = format!(
        "--force-with-lease=refs/heads/{branch}:{}",
        fetched_branch(dir, branch).unwrap_or_default()
    );
    let refs = format!("refs/ganger/{slug}/*:refs/ganger/{slug}/*");
    // No `+`: it would override the lease.
    let head = format!("refs/heads/{branch}:refs/heads/{branch}");
    let git = Git::new(dir);
    let url = origin_url(dir).unwrap_or_else(|| ORIGIN.to_owned());
    git.run_remote(
        &[
            "push",
            "--progress",
            "--atomic",
            &lease,
            ORIGIN,
            &head,
            &refs,
        ],
        &url,
    )?;
    // What was pushed is what the next lease starts from.
    git.run([
        "update-ref",
        &format!("refs/remotes/{ORIGIN}/{branch}"),
        &format!("refs/heads/{branch}"),
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::TestRepo;

    fn git(dir: &Path, args: &[&str]) -> String {
        let identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"];
        Git::new(dir)
            .text(identity.iter().chain(args).copied())
            .unwrap()
    }

    #[test]
    fn a_clone_fetches_pushes_a_task_and_refuses_to_overwrite_a_newer_round() {
        let origin = TestRepo::new();
        let scratch = tempfile::tempdir().unwrap();
        let bare = scratch.path().join("remote.git");
        let bare_text = bare.to_string_lossy().into_owned();
        git(
            scratch.path(),
            &[
                "clone",
                "--quiet",
                "--bare",
                &origin.root().to_string_lossy(),
                &bare_text,
            ],
        );
        check_remote(scratch.path(), &bare_text).unwrap();
        assert!(check_remote(scratch.path(), "/nowhere/at/all.git").is_err());

        let (one, two) = (scratch.path().join("w1"), scratch.path().join("w2"));
        assert!(clone_once(&bare_text, &one).unwrap());
        assert!(!clone_once(&bare_text, &one).unwrap());
        assert!(clone_once(&bare_text, &two).unwrap());
        fetch(&one).unwrap();
        assert_eq!(fetched_branch(&one, "agent/t"), None);
        // Worker one makes the task's branch and a snapshot ref, and pushes both.
        git(&one, &["branch", "agent/t", "HEAD"]);
        let base = git(&one, &["rev-parse", "HEAD"]);
        git(&one, &["update-ref", "refs/ganger/t/round-1", &base]);
        push_task(&one, "agent/t", "t").unwrap();
        // Worker two sees them, takes the branch, moves it, pushes.
        fetch(&two).unwrap();
        assert_eq!(
            fetched_branch(&two, "agent/t").as_deref(),
            Some(base.as_str())
        );
        assert_eq!(git(&two, &["rev-parse", "refs/ganger/t/round-1"]), base);
        take_branch(&two, "agent/t").unwrap();
        let tree = git(&two, &["rev-parse", "HEAD^{tree}"]);
        let next = git(&two, &["commit-tree", &tree, "-p", &base, "-m", "round 2"]);
        git(&two, &["update-ref", "refs/heads/agent/t", &next]);
        push_task(&two, "agent/t", "t").unwrap();
        // Worker one, stale, tries to push its own second round: refused, nothing moved.
        let stale = git(&one, &["commit-tree", &tree, "-p", &base, "-m", "stale"]);
        git(&one, &["update-ref", "refs/heads/agent/t", &stale]);
        git(&one, &["update-ref", "refs/ganger/t/round-2", &stale]);
        assert!(push_task(&one, "agent/t", "t").is_err());
        assert_eq!(git(&bare, &["rev-parse", "refs/heads/agent/t"]), next);
        assert!(
            Git::new(&bare)
                .run(["rev-parse", "--verify", "--quiet", "refs/ganger/t/round-2"])
                .is_err()
        );
    }
}

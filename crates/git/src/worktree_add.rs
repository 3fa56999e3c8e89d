//! A linked worktree made as `git worktree add` makes it, without its look at every other
//! worktree: git reads each worktree's record and `HEAD` on every add (is the path already
//! registered? is the branch checked out elsewhere?), which at 1,000 worktrees costs about
//! 40 ms of CPU per add, and `worktree add -b` runs `git branch` and `git reset --hard` as
//! processes of their own on top.
//!
//! Here the record is written as gitrepository-layout describes it and as git writes it
//! (`$GIT_COMMON_DIR/worktrees/NAME/{locked,gitdir,commondir,HEAD}` and the worktree's `.git`
//! file, the `locked` file saying "initializing" until the worktree is ready, as git's does),
//! under the repository's one-add-at-a-time lock that the caller holds. Refs go through git
//! only: the record's `HEAD` starts as the placeholder git itself wrote before it had a ref
//! store for it (a null object id, so that git sees a git directory there), and one git
//! process in the new worktree then makes the branch, points `HEAD` at it, checks out the
//! index and files and runs the `post-checkout` hook: `git checkout -f --no-recurse-submodules
//! --no-track -b BRANCH BASE`, which refuses a branch that exists already and a bad name, as `git branch` does.
//!
//! The branch is new, so no other worktree can have it checked out, and the path is checked
//! as git checks it: absent or an empty directory, and not the path of a registered worktree
//! whose files are gone (looked for among the records of the name git gives it: `NAME`,
//! `NAME1`, ..., where such a record is unless the worktree was moved). Anything unusual for
//! this layout (reftable refs, a sparse checkout or per-worktree configuration to copy, a
//! directory name git would rewrite) goes to `git worktree add` itself.
//!
//! What differs from `git worktree add`'s result: no `ORIG_HEAD` in the record (git's `reset
//! --hard` leaves one, at the commit checked out), and `HEAD`'s reflog says `checkout: moving
//! from (invalid) to BRANCH` where git's says `reset: moving to HEAD`; the hook runs while the
//! record is still locked "initializing" (git unlocks it first). The hook is looked for from the
//! new worktree, where git's add looks from the main checkout: the same unless `core.hooksPath`
//! is relative (husky's `.husky/_`, untracked, is in the main checkout only), so a configuration
//! that may set it goes to `git worktree add` too.

use crate::Oid;
use crate::command::Git;
use crate::discover::Repo;
use crate::error::GitError;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// A worktree's record, written and not yet ready (its `locked` file is still there).
#[derive(Debug)]
pub(crate) struct Registered {
    /// `$GIT_COMMON_DIR/worktrees/NAME`.
    pub record: PathBuf,
    /// The worktree's top directory.
    pub path: PathBuf,
    /// Whether the worktree's directory was made here (so removed again on a failure).
    made_dir: bool,
    /// The placeholder written as the record's `HEAD`.
    placeholder: String,
}

impl Registered {
    /// Removes the record and the worktree's directory after a failure, as git removes what a
    /// failed add made.
    pub(crate) fn discard(&self) {
        let _ = fs::remove_dir_all(&self.record);
        if self.made_dir {
            let _ = fs::remove_dir_all(&self.path);
        } else {
            let _ = fs::remove_file(self.path.join(".git"));
        }
    }

    /// Whether the record's `HEAD` is still the placeholder (nothing in git moved it yet).
    pub(crate) fn head_untouched(&self) -> bool {
        fs::read_to_string(self.record.join("HEAD"))
            .is_ok_and(|head| head.trim_end() == self.placeholder)
    }

    /// Ends the "initializing" lock, or leaves it as `reason` when the worktree stays locked.
    pub(crate) fn finish(&self, keep_locked: Option<&str>) -> Result<(), GitError> {
        let locked = self.record.join("locked");
        match keep_locked {
            Some(reason) => write_line(&locked, reason),
            None => fs::remove_file(&locked).map_err(|e| GitError::io(&locked, e)),
        }
    }
}

impl Repo {
    /// Writes the record of a new worktree at `path` whose `HEAD` is still to be set, with a
    /// `locked` file saying "initializing"; `None` when the repository's layout is one this
    /// does not write (the caller runs `git worktree add`). `oid_len` is the length of the
    /// repository's object ids.
    pub(crate) fn register_worktree(
        &self,
        path: &Path,
        oid_len: usize,
    ) -> Result<Option<Registered>, GitError> {
        let Some(name) = plain_name(path) else {
            return Ok(None);
        };
        // gitrepository-layout: `reftable/` holds the refs of a reftable repository (a
        // worktree's HEAD then lives in a table, not a file); `info/sparse-checkout` and
        // `config.worktree` are what `git worktree add` copies into a new worktree's record.
        let unusual = ["reftable", "info/sparse-checkout", "config.worktree"];
        if unusual.iter().any(|p| self.common_dir.join(p).exists())
            || hooks_path_may_be_set(&self.common_dir)
        {
            return Ok(None);
        }
        let made_dir = match fs::read_dir(path) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(GitError::format(path, "it exists already"));
                }
                false
            }
            Err(e) if e.kind() == ErrorKind::NotFound => true,
            Err(e) => return Err(GitError::io(path, e)),
        };
        fs::create_dir_all(path).map_err(|e| GitError::io(path, e))?;
        let real = path.canonicalize().map_err(|e| GitError::io(path, e))?;
        let dot_git = real.join(".git");
        let common = self
            .common_dir
            .canonicalize()
            .map_err(|e| GitError::io(&self.common_dir, e))?;
        let worktrees = common.join("worktrees");
        let record = match make_record(&worktrees, &name, &dot_git) {
            Ok(record) => record,
            Err(e) => {
                if made_dir {
                    let _ = fs::remove_dir_all(path);
                }
                return Err(e);
            }
        };
        let placeholder = "0".repeat(oid_len);
        let registered = Registered {
            record,
            path: path.to_path_buf(),
            made_dir,
            placeholder,
        };
        let record_line = format!("gitdir: {}", registered.record.display());
        let written = write_line(
            &registered.record.join("gitdir"),
            &dot_git.to_string_lossy(),
        )
        .and_then(|()| write_line(&registered.record.join("commondir"), "../.."))
        .and_then(|()| {
            let refs = registered.record.join("refs");
            fs::create_dir(&refs).map_err(|e| GitError::io(&refs, e))
        })
        .and_then(|()| write_line(&registered.record.join("HEAD"), &registered.placeholder))
        .and_then(|()| write_line(&path.join(".git"), &record_line));
        match written {
            Ok(()) => Ok(Some(registered)),
            Err(e) => {
                registered.discard();
                Err(e)
            }
        }
    }

    /// Makes a worktree at `path` on a new branch `branch` at the commit `base`, checked out,
    /// the `post-checkout` hook run: what `git worktree add -b BRANCH PATH BASE` makes.
    /// `None` when the layout is one for `git worktree add` itself (nothing made).
    pub(crate) fn add_worktree_directly(
        &self,
        path: &Path,
        branch: &str,
        base: &Oid,
    ) -> Result<Option<()>, GitError> {
        let Some(registered) = self.register_worktree(path, base.len())? else {
            return Ok(None);
        };
        // Submodules are left alone whatever `submodule.recurse` says, as git's add leaves
        // them (its `reset --hard --no-recurse-submodules`).
        let checkout = Git::new(path).run([
            "checkout",
            "-q",
            "-f",
            "--no-recurse-submodules",
            "--no-track",
            "-b",
            branch,
            base,
        ]);
        match checkout {
            Ok(_) => registered.finish(None).map(Some),
            // It failed before HEAD moved (a branch that exists, a bad name or base, files it
            // could not write: git checks out before it makes the branch), so nothing stays,
            // as nothing stays of a `git worktree add` whose `git branch` or checkout failed.
            Err(e) if registered.head_untouched() => {
                registered.discard();
                Err(e)
            }
            // Checked out, and the hook failed: git keeps such a worktree and says so.
            Err(e) => {
                let _ = registered.finish(None);
                Err(e)
            }
        }
    }
}

impl Repo {
    /// Removes what an add killed half way left at `path`, nothing having been checked out on
    /// its branch yet: its record (in this repository) still locked "initializing" with `HEAD`
    /// the placeholder, and the directory; or, killed before the worktree's `.git` file was
    /// whole, the records naming `path` that are still initializing, and the directory if
    /// nothing but that partial `.git` file is in it. Whether `path` is gone now; any other
    /// worktree or directory is left alone.
    pub fn discard_half_added_worktree(&self, path: &Path) -> Result<bool, GitError> {
        let worktrees = self.common_dir.join("worktrees");
        let dot_git = fs::read_to_string(path.join(".git"));
        let named = dot_git
            .as_ref()
            .ok()
            .and_then(|text| text.trim_end().strip_prefix("gitdir: "));
        if let Some(record) = named {
            let record = PathBuf::from(record);
            let head = fs::read_to_string(record.join("HEAD")).unwrap_or_default();
            let head = head.trim_end();
            let placeholder = !head.is_empty() && head.bytes().all(|b| b == b'0');
            if !in_dir(&record, &worktrees) || !initializing(&record) || !placeholder {
                return Ok(false);
            }
            fs::remove_dir_all(path).map_err(|e| GitError::io(path, e))?;
            fs::remove_dir_all(&record).map_err(|e| GitError::io(&record, e))?;
            return Ok(true);
        }
        // No `.git` file, or one written only in part: killed before it was whole.
        match &dot_git {
            Err(e) if e.kind() != ErrorKind::NotFound => return Ok(false),
            _ => {}
        }
        let Ok(real) = path.canonicalize() else {
            return Ok(false);
        };
        let dot_git = real.join(".git");
        for entry in fs::read_dir(&worktrees).into_iter().flatten().flatten() {
            let record = entry.path();
            let names = fs::read_to_string(record.join("gitdir"))
                .is_ok_and(|gitdir| Path::new(gitdir.trim_end()) == dot_git);
            if names && initializing(&record) {
                fs::remove_dir_all(&record).map_err(|e| GitError::io(&record, e))?;
            }
        }
        let only_dot_git = fs::read_dir(path).is_ok_and(|entries| {
            entries
                .flatten()
                .all(|entry| entry.file_name() == ".git" && entry.path().is_file())
        });
        if only_dot_git {
            fs::remove_dir_all(path).map_err(|e| GitError::io(path, e))?;
        }
        Ok(only_dot_git)
    }
}

/// Whether `record` is a directory right in `dir` (both as they really are).
fn in_dir(record: &Path, dir: &Path) -> bool {
    match (record.canonicalize(), dir.canonicalize()) {
        (Ok(record), Ok(dir)) => record.parent() == Some(dir.as_path()),
        _ => false,
    }
}

/// Whether a worktree's record is still locked "initializing" (its add has not finished).
fn initializing(record: &Path) -> bool {
    fs::read_to_string(record.join("locked")).is_ok_and(|why| why.trim_end() == "initializing")
}

/// The name git gives a worktree's record from the last component of its path, when git
/// would take it as it is (`sanitize_refname_component` leaves it alone): ASCII letters,
/// digits, `-`, `_` and `.`, not starting with `.`, without `..` and not ending in `.lock`.
fn plain_name(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !name.starts_with('.')
        && !name.contains("..")
        && !name.ends_with(".lock");
    plain.then(|| name.to_owned())
}

/// Makes the record's directory `worktrees/NAME` as git does (`NAME1`, `NAME2`, ... when the
/// name is taken), with its "initializing" lock. A taken name whose record points at `dot_git`
/// is that path's registration with its files gone: git refuses it, and so is it here.
fn make_record(worktrees: &Path, name: &str, dot_git: &Path) -> Result<PathBuf, GitError> {
    fs::create_dir_all(worktrees).map_err(|e| GitError::io(worktrees, e))?;
    let mut candidate = worktrees.join(name);
    for counter in 1u64.. {
        match fs::create_dir(&candidate) {
            Ok(()) => {
                write_line(&candidate.join("locked"), "initializing")?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let gitdir = fs::read_to_string(candidate.join("gitdir")).unwrap_or_default();
                if Path::new(gitdir.trim_end()) == dot_git {
                    return Err(GitError::format(
                        dot_git.parent().unwrap_or(dot_git),
                        "it is a missing but already registered worktree; \
                         `git worktree prune` or `git worktree remove` clears it",
                    ));
                }
                candidate = worktrees.join(format!("{name}{counter}"));
            }
            Err(e) => return Err(GitError::io(&candidate, e)),
        }
    }
    Err(GitError::format(
        worktrees,
        "no free name for a worktree's record",
    ))
}

/// Whether git's configuration may set `core.hooksPath`, read as text and erring towards yes:
/// the repository's, the global and the system files git reads (as `GIT_CONFIG_GLOBAL`,
/// `GIT_CONFIG_NOSYSTEM` and `GIT_CONFIG_SYSTEM` choose them) naming `hookspath` or including
/// other files, or settings given in the environment.
fn hooks_path_may_be_set(common_dir: &Path) -> bool {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if var("GIT_CONFIG_PARAMETERS").is_some() || var("GIT_CONFIG_COUNT").is_some() {
        return true;
    }
    let mut files = vec![common_dir.join("config")];
    match (var("GIT_CONFIG_GLOBAL"), var("HOME")) {
        (Some(global), _) => files.push(global.into()),
        (None, Some(home)) => {
            let home = PathBuf::from(home);
            let xdg = var("XDG_CONFIG_HOME").map_or_else(|| home.join(".config"), PathBuf::from);
            files.extend([home.join(".gitconfig"), xdg.join("git/config")]);
        }
        (None, None) => {}
    }
    if var("GIT_CONFIG_NOSYSTEM").is_none() {
        match var("GIT_CONFIG_SYSTEM") {
            Some(system) => files.push(system.into()),
            None => files.extend(["/etc/gitconfig", "/usr/local/etc/gitconfig"].map(PathBuf::from)),
        }
    }
    files.iter().any(|file| {
        fs::read(file).is_ok_and(|text| {
            let text = text.to_ascii_lowercase();
            let has = |word: &[u8]| text.windows(word.len()).any(|w| w == word);
            has(b"hookspath") || has(b"include")
        })
    })
}

/// Writes `text` and a newline to `file`, as git's `write_file` does.
fn write_line(file: &Path, text: &str) -> Result<(), GitError> {
    fs::write(file, format!("{text}\n")).map_err(|e| GitError::io(file, e))
}

#[cfg(test)]
#[path = "worktree_add_tests.rs"]
mod tests;

//! The repository a command works on: found from the current directory (any worktree of it),
//! with its configuration and its state directory in the main checkout. `.ganger/` is made on
//! the first command that writes state, and kept out of git through `.git/info/exclude`.

use crate::config::Config;
use crate::error::{EngineError, Result};
use ganger_git::Repo;
use ganger_store::{Backend, SqliteStore, StateDir};
use std::path::Path;

/// A repository ganger works on.
#[derive(Debug)]
pub struct Workspace {
    pub repo: Repo,
    pub state: StateDir,
    pub config: Config,
}

/// Opens the backend whose database is `database`. This is where the backend is chosen:
/// everything else holds it as a [`Backend`].
pub(crate) fn open_backend(database: &Path) -> Result<Box<dyn Backend>> {
    Ok(Box::new(SqliteStore::open(database)?))
}

/// The line `.git/info/exclude` gets.
const EXCLUDE_LINE: &str = "/.ganger/";

impl Workspace {
    /// The repository containing `dir`.
    pub fn discover(dir: &Path) -> Result<Workspace> {
        let repo = ganger_git::discover(dir).map_err(|e| match e {
            ganger_git::GitError::NotARepo { .. } => EngineError::invalid(e.to_string())
                .hint("run ganger inside a git repository (or one of its worktrees)"),
            other => EngineError::from(other),
        })?;
        let config = Config::load(&repo.main)?;
        let state = StateDir::of_checkout(&repo.main);
        Ok(Workspace {
            repo,
            state,
            config,
        })
    }

    /// Whether `.ganger/` exists yet.
    pub fn has_state(&self) -> bool {
        self.state.database().exists()
    }

    /// Makes `.ganger/` and keeps it out of git. Returns whether anything was made.
    pub fn ensure_state_dir(&self) -> Result<bool> {
        let root = self.state.root();
        let made = !root.exists();
        std::fs::create_dir_all(root).map_err(|e| EngineError::io("create", root, e))?;
        let info = self.repo.common_dir.join("info");
        let exclude = info.join("exclude");
        let current = std::fs::read_to_string(&exclude).unwrap_or_default();
        if !current.lines().any(|line| {
            line.trim() == EXCLUDE_LINE || line.trim() == ".ganger/" || line.trim() == ".ganger"
        }) {
            std::fs::create_dir_all(&info).map_err(|e| EngineError::io("create", &info, e))?;
            let mut text = current;
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(EXCLUDE_LINE);
            text.push('\n');
            std::fs::write(&exclude, text).map_err(|e| EngineError::io("write", &exclude, e))?;
        }
        Ok(made)
    }

    /// Opens the store, making the state directory first.
    pub fn open_store(&self) -> Result<Box<dyn Backend>> {
        self.refuse_lost_records()?;
        self.ensure_state_dir()?;
        open_backend(&self.state.database())
    }

    /// Opens the store if there is one; `None` in a repository ganger never wrote to.
    pub fn existing_store(&self) -> Result<Option<Box<dyn Backend>>> {
        self.refuse_lost_records()?;
        if self.has_state() {
            Ok(Some(open_backend(&self.state.database())?))
        } else {
            Ok(None)
        }
    }

    /// Refuses to start from an empty store while tasks' files say there were tasks: a
    /// `state.db` removed or emptied would otherwise be made anew without a word, and the
    /// tasks, their worktrees and branches would be lost to ganger.
    fn refuse_lost_records(&self) -> Result<()> {
        let db = self.state.database();
        let empty = std::fs::metadata(&db).map_or(true, |m| m.len() == 0);
        if !empty {
            return Ok(());
        }
        let tasks_dir = self.state.root().join("tasks");
        let mut slugs: Vec<String> = std::fs::read_dir(&tasks_dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.path().is_dir())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if slugs.is_empty() {
            return Ok(());
        }
        slugs.sort();
        let shown = slugs.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
        let more = if slugs.len() > 5 { ", ..." } else { "" };
        Err(EngineError::invalid(format!(
            "the state database {} is missing or empty, but {} holds the files of {} task(s) \
             ({shown}{more}): their records are lost",
            db.display(),
            tasks_dir.display(),
            slugs.len()
        ))
        .hint(
            "restore state.db from a backup, or move .ganger aside to start afresh (the tasks' \
             worktrees and branches stay; `git worktree list` shows them)",
        ))
    }

    /// The name of the main checkout's directory (`{repo}` in path templates).
    pub fn repo_name(&self) -> String {
        self.repo
            .main
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "repo".into())
    }
}

//! The repository a command works on: found from the current directory (any worktree of it),
//! with its configuration and its state directory in the main checkout. `.ganger/` is made on
//! the first command that writes state, and kept out of git through `.git/info/exclude`.

use crate::config::Config;
use crate::error::{EngineError, Result};
use ganger_git::Repo;
use ganger_store::{SqliteStore, StateDir};
use std::path::Path;

/// A repository ganger works on.
#[derive(Debug)]
pub struct Workspace {
    pub repo: Repo,
    pub state: StateDir,
    pub config: Config,
}

/// The line `.git/info/exclude` gets.
const EXCLUDE_LINE: &str = "/.ganger/";

impl Workspace {
    /// The repository containing `dir`.
    pub fn discover(dir: &Path) -> Result<Workspace> {
        let repo = ganger_git::discover(dir).map_err(|e| {
            EngineError::invalid(e.to_string())
                .hint("run ganger inside a git repository (or one of its worktrees)")
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
    pub fn open_store(&self) -> Result<SqliteStore> {
        self.ensure_state_dir()?;
        Ok(SqliteStore::open(&self.state.database())?)
    }

    /// Opens the store if there is one; `None` in a repository ganger never wrote to.
    pub fn existing_store(&self) -> Result<Option<SqliteStore>> {
        if self.has_state() {
            Ok(Some(SqliteStore::open(&self.state.database())?))
        } else {
            Ok(None)
        }
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

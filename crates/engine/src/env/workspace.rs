//! The repository a command works on: found from the current directory (any worktree of it),
//! with its configuration and its state directory in the main checkout. `.ganger/` is made on
//! the first command that writes state, and kept out of git through `.git/info/exclude`.

use crate::base::config::Config;
use crate::base::error::{EngineError, Result};
use crate::env::store_location::StoreLocation;
use ganger_git::Repo;
use ganger_store::{Backend, PgStore, SqliteStore, StateDir};
use std::path::{Path, PathBuf};

/// A repository ganger works on.
#[derive(Debug)]
pub struct Workspace {
    pub repo: Repo,
    pub state: StateDir,
    pub config: Config,
    /// Where the store is: `.ganger/state.db`, or a PostgreSQL database.
    pub store: StoreLocation,
}

/// Opens the backend whose database is `database`. This is where the backend is chosen:
/// everything else holds it as a [`Backend`].
pub(crate) fn open_backend(database: &Path) -> Result<Box<dyn Backend>> {
    Ok(Box::new(SqliteStore::open(database)?))
}

/// Opens the PostgreSQL store at `url` (its password, when it holds none, looked for in
/// `password_file` among other places); a failure names the URL without its password.
fn open_postgres(url: &str, password_file: Option<&Path>) -> Result<Box<dyn Backend>> {
    match PgStore::open_with(url, password_file) {
        Ok(store) => Ok(Box::new(store)),
        Err(error) => Err(EngineError::environment(
            format!(
                "failed to open the store at {}",
                ganger_store::redact_url(url)
            ),
            error,
        )),
    }
}

/// The line `.git/info/exclude` gets.
const EXCLUDE_LINE: &str = "/.ganger/";

impl Workspace {
    /// The repository containing `dir`, with the store the user named (`--store`,
    /// `GANGER_STORE`: [`crate::store_location::named`]), else the configuration's.
    pub fn discover(dir: &Path, named_store: Option<StoreLocation>) -> Result<Workspace> {
        let repo = ganger_git::discover(dir).map_err(|e| match e {
            ganger_git::GitError::NotARepo { .. } => EngineError::invalid(e.to_string())
                .hint("run ganger inside a git repository (or one of its worktrees)"),
            other => EngineError::from(other),
        })?;
        let config = Config::load(&repo.main)?;
        let state = StateDir::of_checkout(&repo.main);
        let store = StoreLocation::resolve(named_store, config.store.url.as_deref())?;
        Ok(Workspace {
            repo,
            state,
            config,
            store,
        })
    }

    /// The same repository and store with another configuration.
    pub fn with_config(&self, config: Config) -> Workspace {
        Workspace {
            repo: self.repo.clone(),
            state: self.state.clone(),
            config,
            store: self.store.clone(),
        }
    }

    /// Whether there may be records yet: `.ganger/state.db` exists, or the store is a server's
    /// (whose records other hosts may have written).
    pub fn has_state(&self) -> bool {
        match self.store {
            StoreLocation::Local => self.state.database().exists(),
            StoreLocation::Postgres(_) => true,
        }
    }

    /// Opens the backend the workspace names (the state directory is made by the caller).
    fn open_backend(&self) -> Result<Box<dyn Backend>> {
        match &self.store {
            StoreLocation::Local => open_backend(&self.state.database()),
            StoreLocation::Postgres(url) => open_postgres(url, self.password_file().as_deref()),
        }
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
        self.open_backend()
    }

    /// Opens the store if there is one; `None` in a repository ganger never wrote to.
    pub fn existing_store(&self) -> Result<Option<Box<dyn Backend>>> {
        self.refuse_lost_records()?;
        if self.has_state() {
            Ok(Some(self.open_backend()?))
        } else {
            Ok(None)
        }
    }

    /// Refuses to start from an empty store while tasks' files say there were tasks: a
    /// `state.db` removed or emptied would otherwise be made anew without a word, and the
    /// tasks, their worktrees and branches would be lost to ganger.
    fn refuse_lost_records(&self) -> Result<()> {
        if self.store != StoreLocation::Local {
            return Ok(());
        }
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
            "if they were recorded in a PostgreSQL store, name it (--store, GANGER_STORE); else \
             restore state.db from a backup, or move .ganger aside to start afresh (the tasks' \
             worktrees and branches stay; `git worktree list` shows them)",
        ))
    }

    /// What a process ganger starts of itself (a round's host, a warm host) is handed to open
    /// the same store: in its environment, and its password on its stdin.
    pub fn handed_store(&self) -> Result<crate::store_location::Handed> {
        self.store.handed(self.password_file().as_deref())
    }

    /// `[store] password_file`, a relative path taken from the main checkout.
    pub fn password_file(&self) -> Option<PathBuf> {
        self.config
            .store
            .password_file
            .as_ref()
            .map(|file| self.repo.main.join(file))
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

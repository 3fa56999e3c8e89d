//! Where ganger's state lives in a main checkout:
//!
//! ```text
//! .ganger/state.db                          the database (WAL)
//! .ganger/tasks/SLUG/round-N.prompt.md      the prompt exactly as sent
//! .ganger/tasks/SLUG/round-N.jsonl          the agent's stdout (known keys redacted)
//! .ganger/tasks/SLUG/round-N.err            the agent's stderr (known keys redacted)
//! .ganger/tasks/SLUG/round-N.answer.md      the worker's last answer in full
//! .ganger/tasks/SLUG/round-N.host.log       what a detached round host printed
//! .ganger/tasks/SLUG/agent/                 the agent's home in a bwrap or docker sandbox
//! .ganger/run/TOKEN.lock                    a running round's host lock
//! .ganger/cache/                            caches (agent model lists)
//! ```

use std::path::{Path, PathBuf};

/// The state directory of one repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
}

impl StateDir {
    /// The state directory of the main checkout `main`.
    pub fn of_checkout(main: &Path) -> StateDir {
        StateDir {
            root: main.join(".ganger"),
        }
    }

    /// The state directory at `root` (the directory `state.db` is in).
    pub fn at(root: &Path) -> StateDir {
        StateDir {
            root: root.to_path_buf(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn database(&self) -> PathBuf {
        self.root.join("state.db")
    }

    pub fn task_dir(&self, slug: &str) -> PathBuf {
        self.root.join("tasks").join(slug)
    }

    /// A file of round `number` of `slug`: `ext` is `prompt.md`, `jsonl`, `err`, ...
    pub fn round_file(&self, slug: &str, number: u32, ext: &str) -> PathBuf {
        self.task_dir(slug).join(format!("round-{number}.{ext}"))
    }

    pub fn run_dir(&self) -> PathBuf {
        self.root.join("run")
    }

    pub fn lock_file(&self, token: &str) -> PathBuf {
        self.run_dir().join(format!("{token}.lock"))
    }

    /// Files ganger generates for one agent (settings, a private temporary directory).
    pub fn agent_dir(&self, agent: &str) -> PathBuf {
        self.root.join("agents").join(agent)
    }

    /// The agent's own state for one task in a sandbox (its `HOME`: sessions, settings), kept
    /// between rounds so that resumed sessions work.
    pub fn task_agent_dir(&self, slug: &str) -> PathBuf {
        self.task_dir(slug).join("agent")
    }

    /// Cached data (model lists).
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }
}

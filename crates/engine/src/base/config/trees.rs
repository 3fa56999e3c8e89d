//! `[trees]`: how a task's tree is made (docs/trees.md): a pool of worktrees made ahead of time
//! per base commit, which a start takes instead of checking one out, and a cache of one
//! read-only checkout per base commit, which a local start copies by reflink where the file
//! system can.

use serde::Deserialize;

/// The most pooled worktrees a repository may keep for its base: each is a whole checkout on
/// disk.
pub const MOST_POOLED: usize = 32;

/// The most base commits the tree cache may hold: each is a whole checkout on disk.
pub const MOST_CACHED: usize = 64;

/// `[trees]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TreesConfig {
    /// How many ready worktrees to keep for the base tasks start from (0: none, every start
    /// runs `git worktree add`). A start takes one and the pool is refilled in the background.
    pub pool: usize,
    /// How many base commits the tree cache keeps checked out (0, the default: no cache); the
    /// least recently used goes first.
    pub max: usize,
    /// The most disk the tree cache may hold (`"20g"`, `"500m"`, bytes); none: only `max`
    /// bounds it.
    pub disk: Option<DiskSetting>,
}

/// `[trees] disk`: a size as a string with a unit, or a number of bytes.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum DiskSetting {
    Bytes(i64),
    Text(String),
}

impl TreesConfig {
    /// `disk` in bytes (`None`: no limit), or why it cannot be.
    pub fn disk_bytes(&self) -> Result<Option<u64>, String> {
        let bytes = match &self.disk {
            None => return Ok(None),
            Some(DiskSetting::Bytes(n)) => u64::try_from(*n).ok(),
            Some(DiskSetting::Text(text)) => super::parse_size(text),
        };
        match bytes {
            Some(0) => Err("trees.disk: 0 bytes would hold no tree".to_owned()),
            Some(n) => Ok(Some(n)),
            None => Err(
                "trees.disk: not a size (a number of bytes, or \"20g\", \"500m\", \"100k\")"
                    .to_owned(),
            ),
        }
    }

    /// Why the settings cannot be, if they cannot.
    pub fn problem(&self) -> Option<String> {
        if self.pool > MOST_POOLED {
            return Some(format!(
                "trees.pool: {} worktrees is more than the {MOST_POOLED} ganger keeps (each is a whole checkout on disk)",
                self.pool
            ));
        }
        if self.max > MOST_CACHED {
            return Some(format!(
                "trees.max: {} cached trees is more than the {MOST_CACHED} ganger keeps (each is a whole checkout on disk)",
                self.max
            ));
        }
        match self.disk_bytes() {
            Err(reason) => Some(reason),
            Ok(Some(_)) if self.max == 0 => Some(
                "trees.disk: set while the tree cache is off (trees.max = 0); set trees.max too"
                    .to_owned(),
            ),
            Ok(_) => None,
        }
    }
}

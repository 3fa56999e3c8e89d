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
    /// Folders of the main checkout (relative paths: `node_modules`, `target`, `.venv`) that
    /// an overlay task finds in its tree as read-only layers: it starts with the main
    /// checkout's dependencies and writes its own copy of what it changes only. Each must be
    /// ignored by git; one the main checkout lacks is left out.
    pub share: Vec<String>,
}

/// The most folders `[trees] share` may name: each is a mount per task.
pub const MOST_SHARED: usize = 16;

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
        if let Some(reason) = self.share_problem() {
            return Some(reason);
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

impl TreesConfig {
    /// Why `share` cannot be, if it cannot: each entry a plain relative path inside the
    /// repository (no `..`, not `.git`, nothing overlayfs's option syntax cannot carry), none
    /// inside another, and the cache on (the layers stand on overlays of cached trees).
    fn share_problem(&self) -> Option<String> {
        if self.share.is_empty() {
            return None;
        }
        if self.max == 0 {
            return Some(
                "trees.share: set while the tree cache is off (trees.max = 0); shared folders \
                 are layers of overlay tasks, which stand on cached trees: set trees.max too"
                    .to_owned(),
            );
        }
        if self.share.len() > MOST_SHARED {
            return Some(format!(
                "trees.share: {} folders is more than the {MOST_SHARED} ganger shares (each is a mount per task)",
                self.share.len()
            ));
        }
        for (i, entry) in self.share.iter().enumerate() {
            if let Some(why) = share_entry_problem(entry) {
                return Some(format!("trees.share: {entry:?} {why}"));
            }
            let clean = entry.trim_end_matches('/');
            for other in &self.share[..i] {
                let other = other.trim_end_matches('/');
                let inside = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}/"));
                if inside(clean, other) || inside(other, clean) {
                    return Some(format!(
                        "trees.share: {entry:?} and {other:?} overlap; name each folder once"
                    ));
                }
            }
        }
        None
    }

    /// The shared folders as given, without a trailing `/`.
    pub fn shared_folders(&self) -> impl Iterator<Item = &str> {
        self.share.iter().map(|entry| entry.trim_end_matches('/'))
    }
}

/// Why one `[trees] share` entry cannot name a folder of the repository, if it cannot.
fn share_entry_problem(entry: &str) -> Option<&'static str> {
    let clean = entry.trim_end_matches('/');
    if clean.is_empty() {
        return Some("names no folder (the repository itself cannot be shared)");
    }
    if clean.starts_with('/') {
        return Some("is absolute: give a folder relative to the repository's root");
    }
    if clean.contains([',', ':', '\\', '\n', '\0']) {
        return Some(
            "holds a character an overlay's options cannot carry (',' ':' '\\' or a newline)",
        );
    }
    for part in clean.split('/') {
        match part {
            "" | "." => return Some("has an empty or '.' component"),
            ".." => return Some("leaves the repository ('..')"),
            ".git" => return Some("is git's own folder"),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_share(max: usize, share: &[&str]) -> TreesConfig {
        TreesConfig {
            max,
            share: share.iter().map(|s| (*s).to_owned()).collect(),
            ..TreesConfig::default()
        }
    }

    #[test]
    fn dependency_folders_inside_the_repository_may_be_shared() {
        let trees = with_share(2, &["node_modules", "target/", "web/node_modules", ".venv"]);
        assert_eq!(trees.problem(), None);
        assert_eq!(
            trees.shared_folders().collect::<Vec<_>>(),
            ["node_modules", "target", "web/node_modules", ".venv"]
        );
    }

    #[test]
    fn a_share_that_cannot_be_is_named_with_why() {
        for (share, max, said) in [
            (vec!["node_modules"], 0, "the tree cache is off"),
            (vec!["/opt/deps"], 2, "is absolute"),
            (vec!["../deps"], 2, "leaves the repository"),
            (vec!["a/./b"], 2, "'.' component"),
            (vec![".git"], 2, "git's own folder"),
            (vec![""], 2, "names no folder"),
            (vec!["/"], 2, "names no folder"),
            (vec!["a,b"], 2, "cannot carry"),
            (vec!["x:y"], 2, "cannot carry"),
            (vec!["web", "web/node_modules"], 2, "overlap"),
            (vec!["target", "target/"], 2, "overlap"),
        ] {
            let problem = with_share(max, &share).problem();
            assert!(
                problem
                    .as_deref()
                    .is_some_and(|p| p.starts_with("trees.share: ") && p.contains(said)),
                "{share:?}: {problem:?}"
            );
        }
        let many: Vec<String> = (0..=MOST_SHARED).map(|i| format!("d{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(
            with_share(2, &many)
                .problem()
                .unwrap()
                .contains("more than the 16")
        );
    }
}

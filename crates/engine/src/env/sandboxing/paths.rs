//! The paths a sandbox mounts inside the worktree, and the seed's rule about ignored files:
//! a sandbox round is refused when ignored files sit under a path it mounts read-only (they
//! would be exposed to the agent, unchanged by it, and the user would not know) or under a
//! writable path mounted over a read-only one (they would be hidden), naming them. Ignored
//! files elsewhere in the writable worktree are fine: the checks make build output there.

use crate::base::error::{EngineError, Result};
use std::path::{Component, Path};

/// Refuses `--rw` paths that are not plain relative paths inside the worktree.
pub(crate) fn check_rw_paths(paths: &[String]) -> Result<()> {
    for path in paths {
        let inside = !path.is_empty()
            && Path::new(path)
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            return Err(EngineError::invalid(format!(
                "--rw {path:?}: give a path inside the worktree, relative to it (no '..', not absolute)"
            )));
        }
    }
    Ok(())
}

/// Refuses when ignored files would be exposed or hidden by the sandbox's mounts.
pub(crate) fn check_ignored(worktree: &Path, mounted: &[&str]) -> Result<()> {
    if mounted.is_empty() || !worktree.is_dir() {
        return Ok(());
    }
    let mut args = vec![
        "status",
        "--porcelain",
        "--ignored",
        "--untracked-files=all",
        "--",
    ];
    args.extend(mounted.iter().copied());
    let out = ganger_git::Git::new(worktree).text(args).map_err(|e| {
        EngineError::from(e).context(format!("git status in {}", worktree.display()))
    })?;
    let ignored: Vec<&str> = out
        .lines()
        .filter_map(|line| line.strip_prefix("!! "))
        .collect();
    if ignored.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = ignored.iter().take(10).copied().collect();
    let more = ignored.len().saturating_sub(shown.len());
    Err(EngineError::invalid(format!(
        "{} holds ignored files under paths the sandbox mounts (sandbox.read_only, rw, --rw), which it would expose or hide: {}{}; remove them first",
        worktree.display(),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rw_paths_stay_inside_the_worktree() {
        assert!(check_rw_paths(&["src/gen".into(), "./out".into()]).is_ok());
        for bad in ["", "/etc", "../x", "a/../../b"] {
            assert!(check_rw_paths(&[bad.into()]).is_err(), "{bad}");
        }
    }
}

//! Where the overlays of sandboxed tasks keep their upper folders (`.ganger/trees/upper/`,
//! docs/trees.md), and the bases they stand on, which the tree cache must keep: read by the
//! overlay (`tree_overlay.rs`) and by the cache's eviction (`tree_cache.rs`).

use crate::env::workspace::Workspace;
use ganger_git::Oid;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn uppers_dir(ws: &Workspace) -> PathBuf {
    ws.state.root().join("trees").join("upper")
}

/// The folder of the overlay mounted at `worktree`: its last name and a hash of the whole path.
pub(crate) fn overlay_dir(ws: &Workspace, worktree: &Path) -> PathBuf {
    let hash = worktree
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    let name = worktree
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    uppers_dir(ws).join(format!("{name}-{hash:016x}"))
}

/// The bases the overlays of this repository stand on: the cache keeps them.
pub(crate) fn bases_in_use(ws: &Workspace) -> BTreeSet<Oid> {
    let Ok(entries) = std::fs::read_dir(uppers_dir(ws)) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("base")).ok())
        .map(|base| base.trim().to_owned())
        .collect()
}

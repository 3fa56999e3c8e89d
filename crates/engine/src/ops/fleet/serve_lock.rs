//! The serve lock: one scheduler per repository, behind an exclusive `flock` on
//! `.ganger/run/serve.lock`, which names its holder's pid so a second one is refused with it.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use std::io::Write;

/// The serve lock, held while it lives.
#[derive(Debug)]
pub struct ServeLock {
    _file: std::fs::File,
}

/// Who holds the serve lock, when someone does.
pub fn serve_holder(ws: &Workspace) -> Option<u32> {
    let path = ws.state.run_dir().join("serve.lock");
    let file = std::fs::File::open(&path).ok()?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockShared) {
        Ok(()) => None,
        Err(_) => Some(
            std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0),
        ),
    }
}

/// Takes the serve lock; refused, naming the holder, when another scheduler runs.
pub fn take_serve_lock(ws: &Workspace) -> Result<ServeLock> {
    ws.ensure_state_dir()?;
    let dir = ws.state.run_dir();
    std::fs::create_dir_all(&dir).map_err(|e| EngineError::io("create", &dir, e))?;
    let path = dir.join("serve.lock");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| EngineError::io("open", &path, e))?;
    if rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_err() {
        let pid = std::fs::read_to_string(&path).unwrap_or_default();
        return Err(EngineError::invalid(format!(
            "a scheduler already runs for this repository (pid {})",
            pid.trim()
        ))
        .hint("queued work goes to it; `ganger fleet status` shows the queue"));
    }
    let _ = file.set_len(0);
    let _ = write!(file, "{}", std::process::id());
    let _ = file.flush();
    Ok(ServeLock { _file: file })
}

//! What a task changed (or one of its rounds), for readers that must not hold a big patch in
//! memory: the patch as git writes it ([`Engine::diff_stream`], which the HTTP API streams),
//! and a page of it ([`Engine::diff_page`], the MCP `diff` tool's) cut from a patch written
//! once to `.ganger/diff-pages/` for its pair of trees, so that paging through a patch builds
//! it once, not once a page. A task's worktree is snapshotted on each call, as `ganger diff`
//! does: a worktree that did not change has the same tree, and so the same patch.

use crate::api::Engine;
use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The most of a patch a stream hands over at a time: big enough that handing it over costs
/// little beside copying it (a piece of a pipe's 64 KB at a time cost serve three times the
/// CPU of holding the whole patch), small enough to be nothing beside a big patch.
const CHUNK: u64 = 256 * 1024;

/// How long a patch written for paging is kept unused.
const KEEP_UNUSED: Duration = Duration::from_secs(600);

/// The most patches kept for paging.
const KEEP_AT_MOST: usize = 16;

/// A patch as git writes it.
#[derive(Debug)]
pub struct DiffStream {
    git: ganger_git::GitStream,
}

impl DiffStream {
    /// The next piece of the patch (256 KB, less at its end); `None` at its end.
    pub fn next_chunk(&mut self) -> Result<Option<Vec<u8>>> {
        let mut chunk = Vec::with_capacity(CHUNK as usize);
        (&mut self.git)
            .take(CHUNK)
            .read_to_end(&mut chunk)
            .map_err(|e| EngineError::environment("git failed to write the patch", e))?;
        Ok((!chunk.is_empty()).then_some(chunk))
    }
}

/// A page of a patch.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffPage {
    /// Where the page starts, in bytes of the patch.
    pub start: u64,
    /// The page (its bytes read as UTF-8, anything else replaced).
    pub text: String,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<u64>,
    /// The patch's size in bytes.
    pub total: u64,
}

impl Engine {
    /// Task `slug`'s patch against its base, or round `round`'s alone (a diffstat with
    /// `stat`), as git writes it.
    pub fn diff_stream(&self, slug: &str, round: Option<u32>, stat: bool) -> Result<DiffStream> {
        let (repo, from, to) = ends(self.workspace(), slug, round)?;
        Ok(DiffStream {
            git: repo.diff_stream(&from, &to, stat)?,
        })
    }

    /// At most `limit` bytes of the same patch from byte `offset`, ending at a line's end
    /// where one is in the page, and never inside a character.
    pub fn diff_page(
        &self,
        slug: &str,
        round: Option<u32>,
        stat: bool,
        offset: u64,
        limit: usize,
    ) -> Result<DiffPage> {
        let ws = self.workspace();
        let (repo, from, to) = ends(ws, slug, round)?;
        let tree = |rev: &str| {
            repo.tree_of(rev).ok_or_else(|| {
                EngineError::environment_message(format!("git has no tree for {rev}"))
            })
        };
        let name = format!(
            "{}-{}{}.patch",
            tree(&from)?,
            tree(&to)?,
            if stat { "-stat" } else { "" }
        );
        let dir = ws.state.root().join("diff-pages");
        let path = dir.join(&name);
        let mut file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(_) => {
                write_patch(&dir, &path, repo.diff_stream(&from, &to, stat)?)?;
                std::fs::File::open(&path).map_err(|e| EngineError::io("open", &path, e))?
            }
        };
        let _ = file.set_modified(SystemTime::now());
        page_of(&mut file, offset, limit).map_err(|e| EngineError::io("read", &path, e))
    }
}

/// Where task `slug`'s patch is read (its worktree, or the repository) and its two ends.
fn ends(
    ws: &Workspace,
    slug: &str,
    round: Option<u32>,
) -> Result<(ganger_git::Repo, String, String)> {
    match round {
        Some(round) => crate::api::round_diff::round_ends(ws, slug, round),
        None => crate::ops::diff::task_ends(ws, slug),
    }
}

/// Writes the patch `git` writes to `path` (through a file of its own in `dir`, renamed into
/// place whole), and lets go of patches unused for long.
fn write_patch(dir: &Path, path: &Path, mut git: ganger_git::GitStream) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
    let partial = dir.join(format!(
        "{}.{}.part",
        path.file_name()
            .map_or_else(|| "patch".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    let written = (|| {
        let mut out = std::fs::File::create(&partial)?;
        std::io::copy(&mut git, &mut out)?;
        out.flush()?;
        std::fs::rename(&partial, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(EngineError::environment(
            "failed to write the patch for paging",
            error,
        ));
    }
    forget_old(dir);
    Ok(())
}

/// Removes the patches unused for [`KEEP_UNUSED`] and all but the [`KEEP_AT_MOST`] used
/// last (and pieces left by a writer that died).
fn forget_old(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut kept: Vec<(SystemTime, PathBuf)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let used = entry
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let unused = now.duration_since(used).unwrap_or_default();
        if unused > KEEP_UNUSED {
            let _ = std::fs::remove_file(&path);
        } else if path.extension().is_some_and(|e| e == "patch") {
            kept.push((used, path));
        }
    }
    kept.sort();
    let extra = kept.len().saturating_sub(KEEP_AT_MOST);
    for (_, path) in kept.into_iter().take(extra) {
        let _ = std::fs::remove_file(path);
    }
}

/// Whether byte `at` of `bytes` starts a character (or is past them).
fn starts_char(bytes: &[u8], at: usize) -> bool {
    bytes.get(at).is_none_or(|b| (*b as i8) >= -0x40)
}

/// A page of the patch in `file`: at most `limit` bytes from `offset`, its start moved back to
/// a character's start, its end back to a line's end (else a character's) unless it is the
/// patch's end.
fn page_of(file: &mut std::fs::File, offset: u64, limit: usize) -> std::io::Result<DiffPage> {
    let total = file.metadata()?.len();
    let wanted = offset.min(total);
    // Three bytes before: enough to find the start of the character `offset` is in.
    let from = wanted.saturating_sub(3);
    let span = usize::try_from(total - from).unwrap_or(usize::MAX);
    let length = span.min(limit.saturating_add(3));
    let mut window = vec![0u8; length];
    file.seek(SeekFrom::Start(from))?;
    file.read_exact(&mut window)?;
    let mut start = usize::try_from(wanted - from).unwrap_or(0);
    while start > 0 && !starts_char(&window, start) {
        start -= 1;
    }
    let mut end = (start + limit).min(window.len());
    let at_end = from + end as u64 == total;
    if !at_end {
        while end > start && !starts_char(&window, end) {
            end -= 1;
        }
        if let Some(newline) = window[start..end].iter().rposition(|b| *b == b'\n') {
            end = start + newline + 1;
        }
    }
    let next = from + end as u64;
    Ok(DiffPage {
        start: from + start as u64,
        text: String::from_utf8_lossy(&window[start..end]).into_owned(),
        next: (next < total).then_some(next),
        total,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str, offset: u64, limit: usize) -> (u64, String, Option<u64>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p");
        std::fs::write(&path, text).unwrap();
        let page = page_of(&mut std::fs::File::open(&path).unwrap(), offset, limit).unwrap();
        (page.start, page.text, page.next)
    }

    #[test]
    fn pages_end_at_a_lines_end_and_never_inside_a_character() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(page(text, 0, 10), (0, "one\ntwo\n".into(), Some(8)));
        assert_eq!(page(text, 8, 10), (8, "three\n".into(), None));
        assert_eq!(page(text, 99, 10), (14, String::new(), None));
        // No line's end in the page: it ends before the character that does not fit.
        let wide = "aé€b";
        assert_eq!(page(wide, 0, 4), (0, "aé".into(), Some(3)));
        // An offset inside a character starts at the character.
        assert_eq!(page(wide, 2, 4), (1, "é".into(), Some(3)));
        assert_eq!(page(wide, 4, 10), (3, "€b".into(), None));
    }
}

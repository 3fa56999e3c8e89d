//! Writing loose tree and commit objects (SHA-1, zlib), as git itself lays them out: the id is
//! the hash of `"<type> <len>\0<content>"`, the file is `objects/xx/yyyy…`, written to a
//! temporary file in the same directory and renamed into place, never overwritten.

use crate::error::GitError;
use flate2::Compression;
use flate2::write::ZlibEncoder;
use sha1::{Digest, Sha1};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// The kinds of object this module writes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Tree,
    Commit,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Tree => "tree",
            Kind::Commit => "commit",
        }
    }
}

/// The object id of `content` as an object of `kind`.
pub(crate) fn hash(kind: Kind, content: &[u8]) -> [u8; 20] {
    let mut hasher = Sha1::new();
    hasher.update(format!("{} {}\0", kind.name(), content.len()).as_bytes());
    hasher.update(content);
    hasher.finalize().into()
}

pub(crate) fn hex(oid: &[u8; 20]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(40);
    for byte in oid {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 15)]));
    }
    text
}

/// Writes `content` as a loose object into `objects_dir` unless it is there already.
pub(crate) fn write(objects_dir: &Path, kind: Kind, content: &[u8]) -> Result<[u8; 20], GitError> {
    let oid = hash(kind, content);
    let name = hex(&oid);
    let dir = objects_dir.join(&name[..2]);
    let path = dir.join(&name[2..]);
    if path.exists() {
        return Ok(oid);
    }
    fs::create_dir_all(&dir).map_err(|e| GitError::io(&dir, e))?;
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::fast());
    let compressed = encoder
        .write_all(format!("{} {}\0", kind.name(), content.len()).as_bytes())
        .and_then(|()| encoder.write_all(content))
        .and_then(|()| encoder.finish())
        .map_err(|e| GitError::io(&path, e))?;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let temp = dir.join(format!(
        "tmp_obj_ganger_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = fs::write(&temp, &compressed).and_then(|()| {
        let mut permissions = fs::metadata(&temp)?.permissions();
        permissions.set_readonly(true);
        fs::set_permissions(&temp, permissions)?;
        fs::rename(&temp, &path)
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(GitError::io(&path, e));
    }
    Ok(oid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_gits_known_empty_tree() {
        assert_eq!(
            hex(&hash(Kind::Tree, b"")),
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        );
    }
}

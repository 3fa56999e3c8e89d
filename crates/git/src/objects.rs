//! Writing loose tree and commit objects (SHA-1, zlib), as git itself lays them out: the id is
//! the hash of `"<type> <len>\0<content>"`, the file is `objects/xx/yyyy…`, written to a
//! temporary file in the same directory and renamed into place, never overwritten.
//!
//! The zlib stream uses stored (uncompressed) blocks: trees and commits are small, a
//! compressor's set-up costs more than it saves here, and `git gc` compresses them anyway
//! when it packs. Any zlib reader, git's included, reads stored blocks.

use crate::error::GitError;
use sha1::{Digest, Sha1};
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
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

/// `data` as a zlib stream of stored blocks (RFC 1950 and RFC 1951, section 3.2.4).
pub(crate) fn zlib_stored(data: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 65_535;
    let mut out = Vec::with_capacity(data.len() + data.len() / BLOCK * 5 + 11);
    // CMF: deflate with a 32 KiB window; FLG: fastest level, check bits making CMF*256+FLG % 31 == 0.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut chunks = data.chunks(BLOCK).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    // 5552 bytes is the most that can be summed before b may overflow a u32.
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
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
    match fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(GitError::io(&dir, e)),
    }
    let mut raw = format!("{} {}\0", kind.name(), content.len()).into_bytes();
    raw.extend_from_slice(content);
    let compressed = zlib_stored(&raw);
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let temp = dir.join(format!(
        "tmp_obj_ganger_{}_{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    // Read-only from the start, as git leaves its objects.
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(&temp)
        .and_then(|mut file| file.write_all(&compressed))
        .and_then(|()| fs::rename(&temp, &path));
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
    fn stored_zlib_streams_decode_to_the_input() {
        use std::io::Read;
        for size in [0, 1, 100, 65_535, 65_536, 200_000] {
            let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let mut decoded = Vec::new();
            flate2::read::ZlibDecoder::new(&zlib_stored(&data)[..])
                .read_to_end(&mut decoded)
                .unwrap();
            assert_eq!(decoded, data, "size {size}");
        }
    }

    #[test]
    fn hashes_match_gits_known_empty_tree() {
        assert_eq!(
            hex(&hash(Kind::Tree, b"")),
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        );
    }
}

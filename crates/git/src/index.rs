//! Reading git's index file (versions 2, 3 and 4) into a flat list of entries: the part of the
//! format a snapshot needs (path, mode, object id). Split indexes, sparse directory entries and
//! unmerged entries are reported as unsupported so that the caller falls back to git itself.

use crate::error::GitError;
use std::path::Path;

/// One staged file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct IndexEntry {
    /// The path relative to the work tree, `/`-separated, as git stores it.
    pub path: Vec<u8>,
    /// The file mode: 0o100644, 0o100755, 0o120000 (symlink) or 0o160000 (submodule).
    pub mode: u32,
    /// The blob (or submodule commit) id.
    pub oid: [u8; 20],
}

const HEADER: usize = 12;
const OID_LEN: usize = 20;
/// ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), the oid, then 2 bytes of flags.
const FIXED: usize = 40 + OID_LEN + 2;
const EXTENDED_FLAG: u16 = 0x4000;
const STAGE_MASK: u16 = 0x3000;
const NAME_MASK: u16 = 0x0fff;
const SPARSE_DIR_MODE: u32 = 0o040000;

/// Reads the index at `path`.
pub fn read_index(path: &Path) -> Result<Vec<IndexEntry>, GitError> {
    let data = std::fs::read(path).map_err(|e| GitError::io(path, e))?;
    parse_index(&data).map_err(|what| GitError::format(path, what))
}

fn be32(data: &[u8], at: usize) -> Result<u32, String> {
    data.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_be_bytes)
        .ok_or_else(|| "truncated index".to_owned())
}

fn be16(data: &[u8], at: usize) -> Result<u16, String> {
    data.get(at..at + 2)
        .and_then(|b| b.try_into().ok())
        .map(u16::from_be_bytes)
        .ok_or_else(|| "truncated index".to_owned())
}

pub(crate) fn parse_index(data: &[u8]) -> Result<Vec<IndexEntry>, String> {
    parse_index_and_trees(data).map(|(entries, _)| entries)
}

/// The trees git already wrote for an index, from its cache-tree extension (`TREE`): by
/// directory (`""` for the root, else `dir/sub/`), the tree's id and how many index entries it
/// covers. Only the directories git still holds valid are listed (a change invalidates its
/// directory and every one above it).
pub(crate) type CacheTree = std::collections::HashMap<Vec<u8>, ([u8; OID_LEN], usize)>;

/// The entries of an index and the trees of its cache-tree extension.
pub(crate) fn parse_index_and_trees(data: &[u8]) -> Result<(Vec<IndexEntry>, CacheTree), String> {
    parse_index_at(data).map(|(entries, trees, _)| (entries, trees))
}

/// The entries of an index, its cache trees, and where each entry starts in `data`.
pub(crate) fn parse_index_at(
    data: &[u8],
) -> Result<(Vec<IndexEntry>, CacheTree, Vec<usize>), String> {
    if data.get(..4) != Some(b"DIRC") {
        return Err("not an index file (no DIRC signature)".into());
    }
    let version = be32(data, 4)?;
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version} is not supported"));
    }
    let count = be32(data, 8)? as usize;
    let mut entries = Vec::with_capacity(count.min(1 << 20));
    let mut starts = Vec::with_capacity(count.min(1 << 20));
    let mut at = HEADER;
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let mode = be32(data, at + 24)?;
        let oid: [u8; OID_LEN] = data
            .get(at + 40..at + 40 + OID_LEN)
            .and_then(|b| b.try_into().ok())
            .ok_or("truncated index entry")?;
        let flags = be16(data, at + 40 + OID_LEN)?;
        let mut cursor = at + FIXED;
        if flags & EXTENDED_FLAG != 0 {
            if version < 3 {
                return Err("extended flags in a version 2 index".into());
            }
            cursor += 2;
        }
        if flags & STAGE_MASK != 0 {
            return Err("the index has unmerged entries".into());
        }
        if mode == SPARSE_DIR_MODE {
            return Err("the index is sparse".into());
        }
        let path = if version == 4 {
            let (strip, used) = varint(data, cursor)?;
            cursor += used;
            let end = nul(data, cursor)?;
            let keep = previous
                .len()
                .checked_sub(strip)
                .ok_or("bad path compression in index")?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&data[cursor..end]);
            cursor = end + 1;
            path
        } else {
            let len = usize::from(flags & NAME_MASK);
            let end = if len < usize::from(NAME_MASK) {
                cursor + len
            } else {
                nul(data, cursor)?
            };
            let path = data
                .get(cursor..end)
                .ok_or("truncated index path")?
                .to_vec();
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            let size = end - at;
            cursor = at + (size + 8) / 8 * 8;
            path
        };
        previous.clone_from(&path);
        entries.push(IndexEntry { path, mode, oid });
        starts.push(at);
        at = cursor;
    }
    // Extensions follow the entries; a split index keeps most entries elsewhere.
    let end = data.len().saturating_sub(OID_LEN);
    let mut trees = CacheTree::new();
    while at + 8 <= end {
        let signature = &data[at..at + 4];
        if signature == b"link" {
            return Err("the index is split (core.splitIndex)".into());
        }
        if signature == b"sdir" {
            return Err("the index is sparse".into());
        }
        let size = be32(data, at + 4)? as usize;
        if signature == b"TREE"
            && let Some(body) = data.get(at + 8..at + 8 + size)
        {
            // A cache tree that does not read is only a lost shortcut: trees get written.
            let mut read = CacheTreeReader { data: body, at: 0 };
            if read.node(&[], &mut trees).is_none() {
                trees.clear();
            }
        }
        at += 8 + size;
    }
    Ok((entries, trees, starts))
}

/// A new index file holding only the entries at `keep` (positions in `entries`, ascending) of
/// the index `data` (as `parse_index_at` read it, any version), byte for byte as git stored
/// them (stat data, flags), written as version 2, or 3 when a kept entry has extended flags;
/// no extensions, and git's SHA-1 checksum at the end.
pub(crate) fn subset_index(
    data: &[u8],
    entries: &[IndexEntry],
    starts: &[usize],
    keep: &[usize],
) -> Result<Vec<u8>, String> {
    use sha1::{Digest, Sha1};
    let flags_of = |i: usize| be16(data, starts[i] + 40 + OID_LEN);
    let mut extended = false;
    for &i in keep {
        extended |= flags_of(i)? & EXTENDED_FLAG != 0;
    }
    let count = u32::try_from(keep.len()).map_err(|_| "too many index entries")?;
    let mut out = Vec::with_capacity(HEADER + keep.len() * 96 + OID_LEN);
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&(if extended { 3u32 } else { 2 }).to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    for &i in keep {
        let at = starts[i];
        let flags = flags_of(i)?;
        let path = &entries[i].path;
        let entry_start = out.len();
        out.extend_from_slice(
            data.get(at..at + 40 + OID_LEN)
                .ok_or("truncated index entry")?,
        );
        let name_len = u16::try_from(path.len().min(usize::from(NAME_MASK))).unwrap_or(NAME_MASK);
        out.extend_from_slice(&((flags & !NAME_MASK) | name_len).to_be_bytes());
        if flags & EXTENDED_FLAG != 0 {
            out.extend_from_slice(
                data.get(at + FIXED..at + FIXED + 2)
                    .ok_or("truncated index entry")?,
            );
        }
        out.extend_from_slice(path);
        // 1 to 8 NULs, to a multiple of 8 bytes from the entry's start.
        let size = out.len() - entry_start;
        out.resize(entry_start + (size + 8) / 8 * 8, 0);
    }
    let checksum: [u8; OID_LEN] = Sha1::digest(&out).into();
    out.extend_from_slice(&checksum);
    Ok(out)
}

/// Reads git's cache-tree extension: per directory, depth first, its name (NUL-terminated),
/// `ENTRIES SUBTREES\n` in ASCII (ENTRIES is -1 when invalid), then the tree's id if valid,
/// then its subtrees.
struct CacheTreeReader<'a> {
    data: &'a [u8],
    at: usize,
}

impl CacheTreeReader<'_> {
    fn until(&mut self, byte: u8) -> Option<&[u8]> {
        let rest = self.data.get(self.at..)?;
        let len = rest.iter().position(|&b| b == byte)?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    fn number(&mut self, end: u8) -> Option<i64> {
        std::str::from_utf8(self.until(end)?).ok()?.parse().ok()
    }

    fn node(&mut self, parent: &[u8], trees: &mut CacheTree) -> Option<()> {
        let name = self.until(0)?.to_vec();
        let entries = self.number(b' ')?;
        let subtrees = self.number(b'\n')?;
        let mut path = parent.to_vec();
        if !name.is_empty() {
            path.extend_from_slice(&name);
            path.push(b'/');
        }
        if entries >= 0 {
            let oid: [u8; OID_LEN] = self.data.get(self.at..self.at + OID_LEN)?.try_into().ok()?;
            self.at += OID_LEN;
            trees.insert(path.clone(), (oid, usize::try_from(entries).ok()?));
        }
        for _ in 0..subtrees.max(0) {
            self.node(&path, trees)?;
        }
        Some(())
    }
}

fn nul(data: &[u8], from: usize) -> Result<usize, String> {
    data.get(from..)
        .and_then(memchr_nul)
        .map(|offset| from + offset)
        .ok_or_else(|| "unterminated index path".to_owned())
}

fn memchr_nul(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0)
}

/// git's offset varint (index v4 path compression).
fn varint(data: &[u8], mut at: usize) -> Result<(usize, usize), String> {
    let start = at;
    let mut byte = *data.get(at).ok_or("truncated varint")?;
    let mut value = usize::from(byte & 0x7f);
    while byte & 0x80 != 0 {
        at += 1;
        byte = *data.get(at).ok_or("truncated varint")?;
        value = ((value + 1) << 7) | usize::from(byte & 0x7f);
    }
    Ok((value, at + 1 - start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_repo::TestRepo;

    fn listing(entries: &[IndexEntry]) -> String {
        entries
            .iter()
            .map(|e| {
                let oid: String = e.oid.iter().map(|b| format!("{b:02x}")).collect();
                format!(
                    "{:o} {} 0\t{}",
                    e.mode,
                    oid,
                    String::from_utf8_lossy(&e.path)
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn every_index_version_reads_like_ls_files() {
        let repo = TestRepo::new();
        std::fs::create_dir_all(repo.root().join("deep/er/still")).unwrap();
        std::fs::write(repo.root().join("deep/er/still/long-name-file.txt"), "x").unwrap();
        std::fs::write(repo.root().join("deep/er/b"), "y").unwrap();
        std::fs::write(repo.root().join("run.sh"), "#!/bin/sh\n").unwrap();
        // A long path (the 12-bit length field saturates at 0xfff, beyond PATH_MAX here).
        let long: std::path::PathBuf = (0..17).map(|i| format!("{i}{}", "n".repeat(200))).collect();
        std::fs::create_dir_all(repo.root().join(&long).parent().unwrap()).unwrap();
        std::fs::write(repo.root().join(&long), "long").unwrap();
        std::os::unix::fs::symlink("README.md", repo.root().join("link")).unwrap();
        repo.git(&["add", "-A"]);
        repo.git(&["update-index", "--chmod=+x", "run.sh"]);
        for version in ["2", "3", "4"] {
            repo.git(&["update-index", "--index-version", version]);
            let entries = read_index(&repo.root().join(".git/index")).unwrap();
            assert_eq!(
                listing(&entries),
                repo.git(&["ls-files", "-s"]),
                "version {version}"
            );
        }
    }

    #[test]
    fn a_subset_of_any_version_is_an_index_git_reads_with_the_entries_stat_data() {
        let repo = TestRepo::new();
        std::fs::create_dir_all(repo.root().join("deep/er")).unwrap();
        for name in ["a", "deep/er/b", "deep/er/c", "z"] {
            std::fs::write(repo.root().join(name), name).unwrap();
        }
        let long: String = (0..14)
            .map(|i| format!("{i:02}{}/", "n".repeat(250)))
            .collect::<String>()
            + "f";
        std::fs::create_dir_all(repo.root().join(long.rsplit_once('/').unwrap().0)).unwrap();
        std::fs::write(repo.root().join(&long), "long").unwrap();
        repo.git(&["add", "-A"]);
        // An intent-to-add entry carries extended flags (version 3).
        std::fs::write(repo.root().join("later"), "later").unwrap();
        repo.git(&["add", "-N", "later"]);
        let index = repo.root().join(".git/index");
        let subset_file = repo.root().join(".git/subset-index");
        let git_with = |file: &std::path::Path, args: &[&str]| {
            let output = std::process::Command::new("git")
                .current_dir(repo.root())
                .env("GIT_INDEX_FILE", file)
                .args(args)
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8(output.stdout).unwrap()
        };
        // Each entry of `ls-files --debug`: its line, then its stat lines.
        let blocks = |text: String| -> Vec<(String, String)> {
            let mut blocks: Vec<(String, String)> = Vec::new();
            for line in text.lines() {
                match blocks.last_mut() {
                    Some((_, stat)) if line.starts_with(' ') => stat.push_str(line),
                    _ => blocks.push((line.to_owned(), String::new())),
                }
            }
            blocks
        };
        for version in ["3", "4"] {
            repo.git(&["update-index", "--index-version", version]);
            let data = std::fs::read(&index).unwrap();
            let (entries, _, starts) = parse_index_at(&data).unwrap();
            for wanted in [&["deep/er/c", "later"][..], &["a", long.as_str(), "z"], &[]] {
                let keep: Vec<usize> = (0..entries.len())
                    .filter(|&i| wanted.iter().any(|w| w.as_bytes() == entries[i].path))
                    .collect();
                let subset = subset_index(&data, &entries, &starts, &keep).unwrap();
                std::fs::write(&subset_file, &subset).unwrap();
                let expected: Vec<(String, String)> =
                    blocks(git_with(&index, &["ls-files", "-s", "--debug"]))
                        .into_iter()
                        .filter(|(line, _)| {
                            wanted.iter().any(|w| line.ends_with(&format!("\t{w}")))
                        })
                        .collect();
                assert_eq!(expected.len(), wanted.len(), "version {version}");
                assert_eq!(
                    blocks(git_with(&subset_file, &["ls-files", "-s", "--debug"])),
                    expected,
                    "version {version}, {wanted:?}"
                );
                // The file ends in the SHA-1 of what comes before it (git's reads do not check
                // it): as `sha1sum` has it.
                let (body, trailer) = subset.split_at(subset.len() - OID_LEN);
                std::fs::write(repo.root().join(".git/body"), body).unwrap();
                let sum = std::process::Command::new("sha1sum")
                    .arg(repo.root().join(".git/body"))
                    .output()
                    .unwrap();
                let hex: String = trailer.iter().map(|b| format!("{b:02x}")).collect();
                assert!(
                    String::from_utf8_lossy(&sum.stdout).starts_with(&hex),
                    "version {version}"
                );
            }
        }
    }

    #[test]
    fn unmerged_entries_are_refused() {
        let repo = TestRepo::new();
        repo.git(&["checkout", "-q", "-b", "other"]);
        std::fs::write(repo.root().join("README.md"), "other\n").unwrap();
        repo.git(&["commit", "-qam", "other"]);
        repo.git(&["checkout", "-q", "main"]);
        std::fs::write(repo.root().join("README.md"), "main\n").unwrap();
        repo.git(&["commit", "-qam", "main"]);
        let merge = std::process::Command::new("git")
            .args(["-C", repo.root().to_str().unwrap(), "merge", "-q", "other"])
            .output()
            .unwrap();
        assert!(!merge.status.success());
        let err = read_index(&repo.root().join(".git/index")).unwrap_err();
        assert!(err.to_string().contains("unmerged"), "{err}");
    }
}

//! Which paths of a work tree change while a round runs, as the kernel tells them (inotify on
//! every directory that holds a tracked file), so that the round's end snapshot asks git about
//! those paths only instead of every file of the tree: at 30,000 files git's full look (an
//! lstat of each, the untracked scan) is most of what a round costs beside the agent.
//!
//! Whenever the watch cannot vouch for the list, it says so and the snapshot scans everything:
//! the kernel's queue overflowed, a watch could not be added (the per-user limit), too many
//! paths changed, the work tree's root moved, the index changed (a commit, a reset, a stash:
//! the index no longer is the base the list applies to), or an ignore or attributes file
//! changed (what git takes could change anywhere). A new directory is listed as one path: git
//! looks through it whole.

use rustix::event::{PollFd, PollFlags, poll};
use rustix::fd::OwnedFd;
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

/// More changed paths than this and git's own full look is as cheap.
const MOST_PATHS: usize = 20_000;

/// Below this many files git's full look costs a few milliseconds, less than a watch does
/// (the kernel takes 10-20 ms to tear one down, which a short command would wait for at exit).
pub const WORTH_WATCHING: usize = 2_000;

/// What the watch saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watched {
    /// Every path (relative to the work tree, `/`-separated) that may differ from the start;
    /// nothing else does.
    Paths(BTreeSet<String>),
    /// The watch cannot tell; why.
    Unknown(String),
}

/// A running watch of a work tree.
pub struct ChangeWatch {
    state: State,
    index: PathBuf,
    index_stamp: Option<Stamp>,
}

enum State {
    /// The pipe whose closing stops the thread that reads the kernel's events, and where that
    /// thread answers (before it closes the inotify descriptor: the kernel takes 10-20 ms to
    /// tear a watch down, which nobody needs to wait for).
    Watching {
        answer: Receiver<Watched>,
        wake: OwnedFd,
    },
    /// No watch could start; why.
    Failed(String),
    /// Finished.
    Done,
}

/// What identifies one version of the index file (git replaces it whole when it writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    size: u64,
    modified_ns: i128,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some(Stamp {
        inode: meta.ino(),
        size: meta.size(),
        modified_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
    })
}

impl ChangeWatch {
    /// Starts watching `worktree`: its root and each directory of `files` (paths relative to
    /// it, as the index lists them). `index` is the work tree's index file.
    pub fn start<'a>(
        worktree: &Path,
        files: impl IntoIterator<Item = &'a [u8]>,
        index: &Path,
    ) -> ChangeWatch {
        let index_stamp = stamp(index);
        let watch = |state| ChangeWatch {
            state,
            index: index.to_path_buf(),
            index_stamp,
        };
        let unknown = |why: String| watch(State::Failed(why));
        let fd = match inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK) {
            Ok(fd) => fd,
            Err(e) => return unknown(format!("inotify: {e}")),
        };
        let mut dirs: BTreeSet<&[u8]> = BTreeSet::new();
        dirs.insert(b"");
        // The index lists a directory's files one after another: most share the last one's.
        let mut last_dir: &[u8] = b"";
        for file in files {
            let dir = file
                .iter()
                .rposition(|&b| b == b'/')
                .map_or(&b""[..], |end| &file[..end]);
            if dir == last_dir {
                continue;
            }
            last_dir = dir;
            let mut rest = file;
            while let Some(end) = rest.iter().rposition(|&b| b == b'/') {
                rest = &rest[..end];
                if !dirs.insert(rest) {
                    break;
                }
            }
        }
        let mask = WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MODIFY
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::ATTRIB
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::MOVE_SELF
            | WatchFlags::DELETE_SELF
            | WatchFlags::DONT_FOLLOW
            | WatchFlags::ONLYDIR
            | WatchFlags::EXCL_UNLINK;
        let mut names: HashMap<i32, String> = HashMap::with_capacity(dirs.len());
        for dir in dirs {
            let path = worktree.join(OsStr::from_bytes(dir));
            match inotify::add_watch(&fd, &path, mask) {
                Ok(wd) => {
                    let Ok(name) = std::str::from_utf8(dir) else {
                        return unknown("a directory name that is not UTF-8".into());
                    };
                    names.insert(wd, name.to_owned());
                }
                // A directory the index names but the tree lacks: nothing to watch there yet
                // (its creation shows in the directory above).
                Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) if !dir.is_empty() => {}
                Err(e) => return unknown(format!("a watch on {}: {e}", path.display())),
            }
        }
        let (wake_read, wake_write) =
            match rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC) {
                Ok(pair) => pair,
                Err(e) => return unknown(format!("a pipe: {e}")),
            };
        let (send, answer) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ganger-watch".into())
            .spawn(move || {
                let seen = follow(&fd, wake_read, names);
                let _ = send.send(seen);
                drop(fd);
            });
        match thread {
            Ok(_) => watch(State::Watching {
                answer,
                wake: wake_write,
            }),
            Err(e) => unknown(format!("a thread: {e}")),
        }
    }

    /// Stops the thread (closing the pipe wakes it; it reads what is queued and ends).
    fn stop(&mut self) -> Watched {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Watching { answer, wake } => {
                drop(wake);
                answer
                    .recv()
                    .unwrap_or_else(|_| Watched::Unknown("the watch ended abruptly".into()))
            }
            State::Failed(why) => Watched::Unknown(why),
            State::Done => Watched::Unknown("the watch was finished already".into()),
        }
    }

    /// Stops watching; what changed since the start (every write finished before this call
    /// is in it).
    pub fn finish(mut self) -> Watched {
        let seen = self.stop();
        if stamp(&self.index) != self.index_stamp {
            return Watched::Unknown("the index changed".into());
        }
        seen
    }
}

impl Drop for ChangeWatch {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The watching thread: collects changed paths until `wake` is closed, then reads what is
/// left in the queue.
fn follow(fd: &OwnedFd, wake: OwnedFd, names: HashMap<i32, String>) -> Watched {
    let mut paths = BTreeSet::new();
    let mut buffer = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
    loop {
        let mut fds = [
            PollFd::new(fd, PollFlags::IN),
            PollFd::new(&wake, PollFlags::IN | PollFlags::HUP),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Watched::Unknown(format!("poll: {e}")),
        }
        let woken = !fds[1].revents().is_empty();
        if let Err(why) = read_queue(fd, &names, &mut buffer, &mut paths) {
            return Watched::Unknown(why);
        }
        if woken {
            return Watched::Paths(paths);
        }
    }
}

/// Reads every queued event into `paths`; an error says why the list cannot be trusted.
fn read_queue(
    fd: &OwnedFd,
    names: &HashMap<i32, String>,
    buffer: &mut [MaybeUninit<u8>],
    paths: &mut BTreeSet<String>,
) -> Result<(), String> {
    let mut reader = inotify::Reader::new(fd, buffer);
    loop {
        let event = match reader.next() {
            Ok(event) => event,
            Err(rustix::io::Errno::AGAIN) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(format!("reading the watch: {e}")),
        };
        let flags = event.events();
        if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
            return Err("the kernel's queue of changes overflowed".into());
        }
        if flags.contains(ReadFlags::IGNORED) {
            continue;
        }
        let Some(dir) = names.get(&event.wd()) else {
            continue;
        };
        let Some(name) = event.file_name() else {
            // The watched directory itself moved or went: the one above lists it, unless it
            // is the root.
            if dir.is_empty() && flags.intersects(ReadFlags::MOVE_SELF | ReadFlags::DELETE_SELF) {
                return Err("the work tree moved".into());
            }
            continue;
        };
        // A name git would take as bytes: the list holds text, so such a change is not listed.
        let Ok(name) = name.to_str() else {
            return Err("a name that is not UTF-8 changed".into());
        };
        if name == ".gitignore" || name == ".gitattributes" {
            return Err(format!("{name} changed"));
        }
        let path = if dir.is_empty() {
            name.to_owned()
        } else {
            format!("{dir}/{name}")
        };
        paths.insert(path);
        if paths.len() > MOST_PATHS {
            return Err(format!("more than {MOST_PATHS} paths changed"));
        }
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;

//! Who mounts a task's overlay (docs/trees.md): the kernel's overlayfs when ganger runs as
//! root, else `fuse-overlayfs` (FUSE, any user with `/dev/fuse` and the setuid
//! `fusermount3`). Both stack the same layers and write the same upper folder (files,
//! `0/0` character devices for deletions), and a FUSE mount made by the user stands in the
//! host's mount table as the kernel's does, so ganger's own git, the user's editor and
//! bubblewrap (which binds it in the same user's namespace) all see the merged view. Docker's
//! daemon is another user, which FUSE keeps out: a Docker task without root gets no overlay.
//!
//! The overlay's folder records which one mounted it (`mounter`), so that a later command
//! (after a reboot, `clean`) mounts and unmounts it the same way.

use crate::base::error::Result;
use crate::evidence::mounts;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The programs a FUSE overlay needs.
const FUSE_OVERLAY: &str = "fuse-overlayfs";
const FUSERMOUNT: &str = "fusermount3";

/// Who mounts an overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mounter {
    /// `mount -t overlay`, as root.
    Kernel,
    /// `fuse-overlayfs`, as the user; unmounted by `fusermount3 -u`.
    Fuse,
}

impl Mounter {
    /// Who can mount the overlay of a task here: none for a task that is not sandboxed (its
    /// tree is a copy or a checkout); the kernel as root; FUSE otherwise, for a sandbox that
    /// runs the agent as this user (bubblewrap, not Docker), when it is installed and
    /// `/dev/fuse` may be opened.
    pub(crate) fn for_task(sandboxed: bool, as_the_user: bool) -> Option<Mounter> {
        let root = rustix::process::geteuid().is_root();
        // FUSE is looked at (once per process) only where it could be the answer.
        let fuse = sandboxed && !root && as_the_user && fuse_available();
        choose(sandboxed, as_the_user, root, fuse)
    }

    fn word(self) -> &'static str {
        match self {
            Mounter::Kernel => "kernel",
            Mounter::Fuse => "fuse",
        }
    }

    /// Who mounted the overlay kept in `dir` (the kernel when it does not say: an overlay made
    /// before FUSE ones were).
    pub(crate) fn of(dir: &Path) -> Mounter {
        match std::fs::read_to_string(dir.join("mounter")) {
            Ok(word) if word.trim() == Mounter::Fuse.word() => Mounter::Fuse,
            _ => Mounter::Kernel,
        }
    }

    /// Notes in `dir` that this one mounts its overlay.
    pub(crate) fn record(self, dir: &Path) -> std::io::Result<()> {
        std::fs::write(dir.join("mounter"), self.word())
    }

    /// Mounts `lower` below `upper` at `point` (`work`: the overlay's own work folder);
    /// `what` names it in an error.
    pub(crate) fn mount(
        self,
        lower: &Path,
        upper: &Path,
        work: &Path,
        point: &Path,
        what: &str,
    ) -> Result<()> {
        let options = format!(
            "lowerdir={},upperdir={},workdir={}",
            lower.display(),
            upper.display(),
            work.display()
        );
        let mut command = match self {
            Mounter::Kernel => {
                let mut command = Command::new("mount");
                command.args(["-t", "overlay", "overlay"]);
                command
            }
            Mounter::Fuse => {
                // The FUSE server outlives this command (it serves the mount until it is
                // unmounted): nothing of a round's marks it as the round's to reap.
                let mut command = Command::new(FUSE_OVERLAY);
                command.env_remove(ganger_sandbox::ROUND_ENV);
                command
            }
        };
        mounts::run(command.arg("-o").arg(&options).arg(point), what)
    }

    /// Unmounts what is mounted at `point`, or detaches it when it is busy.
    pub(crate) fn unmount(self, point: &Path, what: &str) -> Result<()> {
        match self {
            Mounter::Kernel => mounts::unmount(point, what),
            Mounter::Fuse => {
                if mounts::run(Command::new(FUSERMOUNT).arg("-u").arg(point), what).is_ok() {
                    return Ok(());
                }
                mounts::run(Command::new(FUSERMOUNT).arg("-uz").arg(point), what)
            }
        }
    }
}

/// Who mounts a task's overlay: for a sandboxed task, the kernel as root, else FUSE where
/// it is there and the sandbox runs the agent as this user.
fn choose(sandboxed: bool, as_the_user: bool, root: bool, fuse: bool) -> Option<Mounter> {
    match (sandboxed, root, as_the_user && fuse) {
        (false, _, _) => None,
        (true, true, _) => Some(Mounter::Kernel),
        (true, false, true) => Some(Mounter::Fuse),
        (true, false, false) => None,
    }
}

/// A path overlayfs's option string can carry (no separator of its syntax in it).
pub(crate) fn plain(path: &Path) -> bool {
    let text = path.to_string_lossy();
    !text.contains([',', ':', '\\', '\n']) && path.is_absolute()
}

/// Whether FUSE overlays can be made here: both programs on `PATH` and `/dev/fuse` open to
/// this user. Looked at once per process.
fn fuse_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        let device = rustix::fs::access(
            "/dev/fuse",
            rustix::fs::Access::READ_OK | rustix::fs::Access::WRITE_OK,
        )
        .is_ok();
        device && on_path(FUSE_OVERLAY).is_some() && on_path(FUSERMOUNT).is_some()
    })
}

/// Where `program` is on `PATH`, if it is.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate).is_ok_and(|m| {
                m.is_file() && rustix::fs::access(candidate, rustix::fs::Access::EXEC_OK).is_ok()
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_overlay_is_unmounted_by_whoever_mounted_it() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Mounter::of(dir.path()), Mounter::Kernel);
        Mounter::Fuse.record(dir.path()).unwrap();
        assert_eq!(Mounter::of(dir.path()), Mounter::Fuse);
        Mounter::Kernel.record(dir.path()).unwrap();
        assert_eq!(Mounter::of(dir.path()), Mounter::Kernel);
    }

    #[test]
    fn who_mounts_a_tasks_overlay() {
        use Mounter::{Fuse, Kernel};
        // (sandboxed, as the user, root, FUSE there) -> who mounts
        for (sandboxed, as_the_user, root, fuse, mounter) in [
            (false, true, true, true, None),
            (false, true, false, true, None),
            (true, true, true, true, Some(Kernel)),
            (true, false, true, false, Some(Kernel)),
            (true, true, false, true, Some(Fuse)),
            (true, true, false, false, None),
            // Docker: its daemon is another user, whom a user's FUSE mount keeps out.
            (true, false, false, true, None),
        ] {
            assert_eq!(
                choose(sandboxed, as_the_user, root, fuse),
                mounter,
                "{sandboxed} {as_the_user} {root} {fuse}"
            );
        }
    }
}

//! A world whose ganger and git run as an unprivileged user (`setpriv`), while the test runs
//! as root: how a user without root meets what needs it (the overlay of a task, mounted by
//! `fuse-overlayfs` instead of the kernel, docs/trees.md).

use crate::World;
use std::path::Path;
use std::process::Command;

/// `nobody`: a user every Debian system has, owning nothing of its own.
pub const UNPRIVILEGED: (u32, u32) = (65534, 65534);

impl World {
    /// This world, its every file given to `user` (uid, gid), and its ganger and git run as
    /// that user from now on. Needs root. The ganger under test is copied into the world
    /// first: the build's own folder may be one the user cannot enter (a clone under `/root`).
    pub fn as_user(mut self, user: (u32, u32)) -> World {
        let bin = self.root().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let copy = bin.join("ganger");
        std::fs::copy(&self.ganger, &copy).unwrap();
        self.ganger = copy;
        self.user = Some(user);
        give(self.root(), user);
        self
    }

    /// A command that runs `program` as the world's user (itself when there is none).
    pub(crate) fn program(&self, program: &Path) -> Command {
        match self.user {
            None => Command::new(program),
            Some((uid, gid)) => {
                let mut command = Command::new("setpriv");
                command
                    .arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .arg("--")
                    .arg(program);
                command
            }
        }
    }

    /// The text of the file at `path`, read as the world's user: a FUSE mount lets no other
    /// user in, root neither.
    pub fn read_file(&self, path: &Path) -> String {
        let output = self.program(Path::new("cat")).arg(path).output().unwrap();
        assert!(
            output.status.success(),
            "cat {}: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Whether the world's user sees a file at `path` (see [`World::read_file`]).
    pub fn sees_file(&self, path: &Path) -> bool {
        self.program(Path::new("test"))
            .arg("-f")
            .arg(path)
            .status()
            .is_ok_and(|status| status.success())
    }

    /// Gives `path` and the folders above it up to the world's root to the world's user, if it
    /// has one (a file the test wrote as root).
    pub(crate) fn own(&self, path: &Path) {
        let Some((uid, gid)) = self.user else { return };
        for at in path
            .ancestors()
            .take_while(|at| at.starts_with(self.root()))
        {
            let _ = std::os::unix::fs::lchown(at, Some(uid), Some(gid));
        }
    }
}

/// Gives everything under `dir` to `user`.
fn give(dir: &Path, (uid, gid): (u32, u32)) {
    let _ = std::os::unix::fs::lchown(dir, Some(uid), Some(gid));
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            give(&path, (uid, gid));
        } else {
            let _ = std::os::unix::fs::lchown(&path, Some(uid), Some(gid));
        }
    }
}

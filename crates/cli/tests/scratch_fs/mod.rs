//! File systems a test makes for itself (as root): an XFS image with reflink on a loop device,
//! a small tmpfs to fill. Without root or the tools, a test skips, except under `CI=true`,
//! where it fails: CI must run it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A file system mounted at `dir`, unmounted (and its image removed) when dropped.
pub struct Mounted {
    pub dir: PathBuf,
    image: Option<PathBuf>,
    _holder: tempfile::TempDir,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        if let Some(image) = &self.image {
            let _ = std::fs::remove_file(image);
        }
    }
}

/// `None` (the test skips) when `what` cannot be made here, but a failure under `CI=true`.
#[expect(clippy::print_stderr, reason = "a skipped test says so")]
fn unavailable(what: &str, why: &str) -> Option<Mounted> {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and {what} cannot be made: {why}"
    );
    eprintln!("skipped: {what} cannot be made: {why}");
    None
}

fn run(program: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(format!(
            "{program} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Err(format!("{program}: {e}")),
    }
}

/// An XFS file system with reflink (`mkfs.xfs -m reflink=1`) on a sparse image of `mb`
/// megabytes (300 at least), loop-mounted.
pub fn xfs(mb: u64) -> Option<Mounted> {
    let holder = tempfile::Builder::new()
        .prefix("ganger-xfs-")
        .tempdir()
        .unwrap();
    let image = holder.path().join("xfs.img");
    let dir = holder.path().join("mnt");
    std::fs::create_dir(&dir).unwrap();
    let file = std::fs::File::create(&image).unwrap();
    file.set_len(mb << 20).unwrap();
    drop(file);
    let made = run(
        "mkfs.xfs",
        &[
            "-q".as_ref(),
            "-m".as_ref(),
            "reflink=1".as_ref(),
            image.as_os_str(),
        ],
    )
    .and_then(|()| {
        run(
            "mount",
            &[
                "-o".as_ref(),
                "loop".as_ref(),
                image.as_os_str(),
                dir.as_os_str(),
            ],
        )
    });
    match made {
        Ok(()) => Some(Mounted {
            dir,
            image: Some(image),
            _holder: holder,
        }),
        Err(why) => unavailable("an XFS image on a loop device", &why),
    }
}

/// A tmpfs of `kb` kilobytes mounted at `dir` (made if missing).
pub fn small_tmpfs(dir: &Path, kb: u64) -> Option<Mounted> {
    std::fs::create_dir_all(dir).unwrap();
    let size = format!("size={kb}k");
    match run(
        "mount",
        &[
            "-t".as_ref(),
            "tmpfs".as_ref(),
            "-o".as_ref(),
            size.as_ref(),
            "tmpfs".as_ref(),
            dir.as_os_str(),
        ],
    ) {
        Ok(()) => Some(Mounted {
            dir: dir.to_path_buf(),
            image: None,
            _holder: tempfile::tempdir().unwrap(),
        }),
        Err(why) => unavailable("a small tmpfs", &why),
    }
}

//! A cgroup (v2) per round, where the system lets ganger make one: it holds every process the
//! agent starts, detached or not, so that the round's CPU use can be read in one place and the
//! whole round killed at once (`cgroup.kill`). Without a writable cgroup v2 hierarchy ganger
//! falls back to the session id and the round marker (see `members.rs`); nothing else changes.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A round's cgroup directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cgroup {
    path: PathBuf,
}

/// Where cgroup v2 is mounted, and this process's cgroup in it.
fn own_cgroup_dir() -> Option<PathBuf> {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    // Fields: id parent major:minor root mountpoint options ... - fstype source superoptions
    let mount = mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        left.split_whitespace().nth(4).map(PathBuf::from)
    })?;
    let own = fs::read_to_string("/proc/self/cgroup").ok()?;
    let relative = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    Some(mount.join(relative.trim_start_matches('/')))
}

impl Cgroup {
    /// Makes a cgroup for the round `token` below this process's own, or `None` when cgroup v2
    /// is missing or not writable here.
    pub fn create(token: &str) -> Option<Cgroup> {
        let path = own_cgroup_dir()?.join("ganger").join(token);
        fs::create_dir_all(&path).ok()?;
        Some(Cgroup { path })
    }

    /// The cgroup at a path recorded earlier (by a host that is now gone).
    pub fn at(path: impl Into<PathBuf>) -> Cgroup {
        Cgroup { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The pids in the cgroup now.
    pub fn pids(&self) -> Vec<i32> {
        fs::read_to_string(self.path.join("cgroup.procs"))
            .map(|text| text.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// CPU time used by every process that was ever in the cgroup, in microseconds.
    pub fn cpu_usec(&self) -> Option<u64> {
        let text = fs::read_to_string(self.path.join("cpu.stat")).ok()?;
        text.lines()
            .find_map(|line| line.strip_prefix("usage_usec "))
            .and_then(|value| value.trim().parse().ok())
    }

    /// Whether any process is left in the cgroup.
    pub fn is_populated(&self) -> bool {
        match fs::read_to_string(self.path.join("cgroup.events")) {
            Ok(text) => text.lines().any(|line| line == "populated 1"),
            Err(_) => false,
        }
    }

    /// Kills every process in the cgroup (SIGKILL), with `cgroup.kill` where the kernel has it.
    pub fn kill_all(&self) {
        if fs::write(self.path.join("cgroup.kill"), "1").is_err() {
            for pid in self.pids() {
                let _ = rustix::process::Pid::from_raw(pid)
                    .map(|pid| rustix::process::kill_process(pid, rustix::process::Signal::KILL));
            }
        }
    }

    /// Sends `signal` to every process in the cgroup.
    pub fn signal_all(&self, signal: rustix::process::Signal) {
        for pid in self.pids() {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
    }

    /// Waits up to `limit` for the cgroup to empty; true when it did.
    pub fn wait_empty(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if !self.is_populated() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Removes the cgroup directory (it must be empty).
    pub fn remove(&self) {
        let _ = fs::remove_dir(&self.path);
    }
}

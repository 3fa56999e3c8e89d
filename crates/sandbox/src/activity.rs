//! How busy a round's processes are, for the stall limit: a round whose agent prints nothing
//! may still be working (OpenCode reports a tool call only when it ends, so a long build is
//! silent), and the way to tell is that its processes use CPU or move bytes. An agent merely
//! waiting on a hung model or sleeping between retries does neither beyond a small baseline.

use crate::members::{RoundMarker, round_members};
use crate::proc_stat::proc_stat;
use std::fs;

/// A sample of a round's resource use, cumulative since the round started (as far as the
/// live processes and the cgroup can tell).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    /// CPU time, in microseconds.
    pub cpu_usec: u64,
    /// Bytes read and written through system calls (`rchar` + `wchar`), sockets included.
    pub io_bytes: u64,
    /// How many processes the round has now.
    pub processes: usize,
}

impl Activity {
    /// Samples the round's processes now.
    pub fn sample(marker: &RoundMarker) -> Activity {
        let members = round_members(marker);
        let ticks_per_second = rustix::param::clock_ticks_per_second().max(1);
        let mut cpu_usec = 0;
        let mut io_bytes = 0;
        for &pid in &members {
            if let Some(stat) = proc_stat(pid) {
                cpu_usec += stat.cpu_ticks() * 1_000_000 / ticks_per_second;
            }
            io_bytes += io_chars(pid);
        }
        if let Some(usec) = marker.cgroup.as_ref().and_then(|c| c.cpu_usec()) {
            // The cgroup also counts processes that have already exited.
            cpu_usec = cpu_usec.max(usec);
        }
        Activity {
            cpu_usec,
            io_bytes,
            processes: members.len(),
        }
    }

    /// Whether `later` shows at least `cpu_usec` more CPU time or `io_bytes` more bytes than
    /// this sample, or a different set of processes (a new one started).
    pub fn busier(&self, later: &Activity, cpu_usec: u64, io_bytes: u64) -> bool {
        later.cpu_usec.saturating_sub(self.cpu_usec) >= cpu_usec
            || later.io_bytes.saturating_sub(self.io_bytes) >= io_bytes
            || later.processes > self.processes
    }
}

fn io_chars(pid: i32) -> u64 {
    let Ok(text) = fs::read_to_string(format!("/proc/{pid}/io")) else {
        return 0;
    };
    text.lines()
        .filter_map(|line| {
            line.strip_prefix("rchar: ")
                .or_else(|| line.strip_prefix("wchar: "))
        })
        .filter_map(|value| value.trim().parse::<u64>().ok())
        .sum()
}

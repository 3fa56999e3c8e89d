//! Reading `/proc/PID/stat`: a process's state, parent, group, session, CPU time and start
//! time. A pid alone names a process only until it is reused; a pid with its start time
//! names it for good, and a zombie is not alive.

use rustix::process::Pid;
use std::fs;

/// What `/proc/PID/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    /// The state letter (`R`, `S`, `D`, `Z`, ...).
    pub state: u8,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    /// User and system CPU time of the process itself, in clock ticks.
    pub utime: u64,
    pub stime: u64,
    /// CPU time of its waited-for children, in clock ticks.
    pub cutime: u64,
    pub cstime: u64,
    /// When the process started, in clock ticks after boot.
    pub start_ticks: u64,
}

impl ProcStat {
    /// CPU time of the process and its reaped children, in clock ticks.
    pub fn cpu_ticks(&self) -> u64 {
        self.utime + self.stime + self.cutime + self.cstime
    }
}

/// A process named for good: its pid and when it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: i32,
    pub start_ticks: u64,
}

impl ProcessId {
    /// The current process.
    pub fn current() -> Option<ProcessId> {
        let pid = Pid::as_raw(Some(rustix::process::getpid()));
        proc_stat(pid).map(|stat| ProcessId {
            pid,
            start_ticks: stat.start_ticks,
        })
    }

    /// Whether this very process still runs (not a zombie, not a newer process on its pid).
    pub fn is_alive(&self) -> bool {
        proc_stat(self.pid).is_some_and(|stat| {
            stat.start_ticks == self.start_ticks && stat.state != b'Z' && stat.state != b'X'
        })
    }
}

/// Reads `/proc/PID/stat`; `None` when the process does not exist.
pub fn proc_stat(pid: i32) -> Option<ProcStat> {
    let text = fs::read(format!("/proc/{pid}/stat")).ok()?;
    parse(pid, &text)
}

fn parse(pid: i32, text: &[u8]) -> Option<ProcStat> {
    // The command name is in parentheses and may itself contain spaces and parentheses.
    let close = text.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(text.get(close + 2..)?).ok()?;
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // `fields[0]` is field 3 of proc(5).
    let field = |n: usize| fields.get(n - 3).copied();
    let number = |n: usize| field(n)?.parse::<u64>().ok();
    let signed = |n: usize| field(n)?.parse::<i32>().ok();
    Some(ProcStat {
        pid,
        state: *field(3)?.as_bytes().first()?,
        ppid: signed(4)?,
        pgrp: signed(5)?,
        session: signed(6)?,
        utime: number(14)?,
        stime: number(15)?,
        cutime: number(16)?,
        cstime: number(17)?,
        start_ticks: number(22)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_command_name_with_spaces_and_parentheses() {
        let line = b"4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 1 2 20 0 1 0 123456 1000 10 18446744073709551615";
        let stat = parse(4242, line).unwrap();
        assert_eq!(
            stat,
            ProcStat {
                pid: 4242,
                state: b'S',
                ppid: 1,
                pgrp: 4242,
                session: 4242,
                utime: 7,
                stime: 3,
                cutime: 1,
                cstime: 2,
                start_ticks: 123456,
            }
        );
        assert_eq!(stat.cpu_ticks(), 13);
    }

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_not() {
        let me = ProcessId::current().unwrap();
        assert!(me.is_alive());
        let reused = ProcessId {
            start_ticks: me.start_ticks + 1,
            ..me
        };
        assert!(!reused.is_alive());
    }
}

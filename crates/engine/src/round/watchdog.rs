//! The limits of a running round: a wall-clock limit, and a stall limit on "no progress".
//!
//! Progress is a new event in the agent's stream (retry notices are not progress) or activity
//! of the round's processes: an agent may print a tool call only when it ends, so a long build
//! in one call prints nothing for minutes while its processes burn CPU; and it may retry a
//! failing model for over a minute without a word, using almost none (measured: docs/design.md,
//! "Limits: wall clock and stall"). So the processes are
//! sampled while the stream is quiet, and a sample counts as progress when the round used at
//! least `ACTIVE_CPU` of CPU or moved `ACTIVE_IO` bytes since the last one, or started a
//! process. The trade-off: a tool that waits without using the CPU or the network (a `sleep`,
//! a lock) for longer than the stall limit is stopped; raise `stall` for such work.
//!
//! An agent whose last word is a retry notice (it is reconnecting to its model) is not
//! working, whatever its processes do: no tool runs before the model answers, and an agent's
//! retrying can itself read and write a lot (one agent CLI writes about 1 MB of its own logs at
//! every reconnection, which kept a round on an unreachable model from stalling at the default
//! limit of 2 minutes: it ran into the wall clock). Then activity is not sampled.

use ganger_sandbox::Activity;
use std::time::{Duration, Instant};

/// How often the processes of a quiet round are sampled, at most (a short stall limit samples
/// more often: four times within the limit, so that work is seen before the limit passes).
pub(crate) const SAMPLE_EVERY: Duration = Duration::from_secs(10);
/// CPU time per second between samples that counts as work: 10% of a core. An agent waiting
/// on a hung model or between retries used 2 to 4.4% (measured: docs/design.md, "Limits: wall
/// clock and stall"); a build or a test run uses far more.
pub(crate) const ACTIVE_CPU_PER_SECOND_USEC: u64 = 100_000;
/// Bytes read or written per second between samples that count as work (idle: under 200).
pub(crate) const ACTIVE_IO_PER_SECOND: u64 = 25_000;

/// Why the watchdog stops a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The wall-clock limit passed.
    Timeout(Duration),
    /// Nothing happened for the stall limit.
    Stall(Duration),
}

/// Watches one round.
#[derive(Debug)]
pub(crate) struct Watchdog {
    started: Instant,
    timeout: Duration,
    stall: Duration,
    every: Duration,
    last_sample: Option<(Instant, Activity)>,
    last_active: Instant,
}

impl Watchdog {
    pub(crate) fn new(started: Instant, timeout: Duration, stall: Duration) -> Watchdog {
        Watchdog {
            started,
            timeout,
            stall,
            every: (stall / 4).clamp(Duration::from_millis(500), SAMPLE_EVERY),
            last_sample: None,
            last_active: started,
        }
    }

    /// When the processes last showed activity.
    pub(crate) fn last_active(&self) -> Instant {
        self.last_active
    }

    /// Whether a limit has passed at `now`, given when the stream last showed progress and
    /// whether the agent's last word was a retry notice; `sample` reads the processes'
    /// activity, and is only called while the stream is quiet and the agent not retrying.
    pub(crate) fn check(
        &mut self,
        now: Instant,
        stream_progress: Instant,
        retrying: bool,
        sample: impl FnOnce() -> Activity,
    ) -> Option<Limit> {
        if now.duration_since(self.started) >= self.timeout {
            return Some(Limit::Timeout(self.timeout));
        }
        if retrying {
            // Activity from before the retries began still counts; the retrying does not.
            self.last_sample = None;
            let quiet_for = now.duration_since(stream_progress.max(self.last_active));
            return (quiet_for >= self.stall).then_some(Limit::Stall(self.stall));
        }
        let quiet_for = now.duration_since(stream_progress.max(self.last_active));
        let due = self
            .last_sample
            .is_none_or(|(at, _)| now.duration_since(at) >= self.every);
        if quiet_for >= self.every && due {
            let activity = sample();
            if let Some((at, before)) = self.last_sample {
                let millis = now.duration_since(at).as_millis().max(1) as u64;
                let cpu = ACTIVE_CPU_PER_SECOND_USEC * millis / 1000;
                let io = ACTIVE_IO_PER_SECOND * millis / 1000;
                if before.busier(&activity, cpu, io) {
                    self.last_active = now;
                }
            }
            self.last_sample = Some((now, activity));
        }
        let quiet_for = now.duration_since(stream_progress.max(self.last_active));
        (quiet_for >= self.stall).then_some(Limit::Stall(self.stall))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(cpu_usec: u64) -> Activity {
        Activity {
            cpu_usec,
            io_bytes: 0,
            processes: 1,
        }
    }

    #[test]
    fn a_quiet_idle_round_stalls_and_a_quiet_busy_one_does_not() {
        let start = Instant::now();
        let stall = Duration::from_secs(20);
        let mut idle = Watchdog::new(start, Duration::from_secs(3600), stall);
        let mut busy = Watchdog::new(start, Duration::from_secs(3600), stall);
        let mut cpu = 0;
        for second in (5..=30).step_by(5) {
            let now = start + Duration::from_secs(second);
            // Half a core: well above the idle floor of 2 to 4.4%.
            cpu += 2_500_000;
            // Idle: 4% of a core, the most an agent used while waiting.
            let idle_limit = idle.check(now, start, false, || activity(second * 40_000));
            let busy_limit = busy.check(now, start, false, || activity(cpu));
            assert_eq!(busy_limit, None, "at {second}s");
            if second >= 20 {
                assert_eq!(idle_limit, Some(Limit::Stall(stall)), "at {second}s");
            } else {
                assert_eq!(idle_limit, None, "at {second}s");
            }
        }
    }

    #[test]
    fn events_are_progress_and_the_wall_clock_ends_everything() {
        let start = Instant::now();
        let mut dog = Watchdog::new(start, Duration::from_secs(60), Duration::from_secs(10));
        let at = |s| start + Duration::from_secs(s);
        assert_eq!(dog.check(at(9), at(0), false, || activity(0)), None);
        assert_eq!(dog.check(at(15), at(8), false, || activity(0)), None);
        assert_eq!(
            dog.check(at(19), at(8), false, || activity(0)),
            Some(Limit::Stall(Duration::from_secs(10)))
        );
        assert_eq!(
            dog.check(at(60), at(59), false, || activity(0)),
            Some(Limit::Timeout(Duration::from_secs(60)))
        );
    }

    #[test]
    fn an_agent_that_says_it_is_retrying_stalls_however_busy_its_processes() {
        let start = Instant::now();
        let stall = Duration::from_secs(20);
        let mut dog = Watchdog::new(start, Duration::from_secs(3600), stall);
        let mut cpu = 0;
        let mut limit = None;
        for second in (5..=30).step_by(5) {
            cpu += 2_500_000;
            limit = dog.check(start + Duration::from_secs(second), start, true, || {
                activity(cpu)
            });
            if limit.is_some() {
                assert_eq!(second, 20);
                break;
            }
        }
        assert_eq!(limit, Some(Limit::Stall(stall)));
        // The same processes, the agent not retrying: work.
        let mut dog = Watchdog::new(start, Duration::from_secs(3600), stall);
        let mut cpu = 0;
        for second in (5..=30).step_by(5) {
            cpu += 2_500_000;
            let now = start + Duration::from_secs(second);
            assert_eq!(dog.check(now, start, false, || activity(cpu)), None);
        }
    }
}

//! How fast `summarize_bytes` reads a big OpenCode stream. Ignored by default; run in release:
//!
//! ```sh
//! cargo test --release -p ganger-agents --test all throughput -- --ignored --nocapture
//! GANGER_BIG_STREAM=big.jsonl cargo test --release -p ganger-agents --test all throughput -- --ignored --nocapture
//! ```
//!
//! Without `GANGER_BIG_STREAM` it reads generated streams of about 100 MB: one shaped like the
//! seed's fake launcher's (`FAKE_EVENTS=…`), one with the large tool outputs of real work. It
//! prints the best of several runs by wall clock and by the thread's own CPU time (Linux), the
//! latter being what a busy machine does not distort.
#![cfg(test)]

use crate::common;

use ganger_agents::opencode::summarize_bytes;
use std::time::{Duration, Instant};

/// The time this thread has spent on a CPU, where Linux tells it.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

fn measure(name: &str, data: &[u8]) {
    let mut wall = Duration::MAX;
    let mut cpu = Duration::MAX;
    let mut lines = 0;
    for _ in 0..15 {
        let (start, start_cpu) = (Instant::now(), cpu_time());
        lines = summarize_bytes(std::hint::black_box(data)).lines;
        wall = wall.min(start.elapsed());
        if let (Some(before), Some(after)) = (start_cpu, cpu_time()) {
            cpu = cpu.min(after.saturating_sub(before));
        }
    }
    let megabytes = data.len() as f64 / 1e6;
    let rate = |time: Duration| megabytes / time.as_secs_f64();
    println!(
        "{name}: {megabytes:.1} MB, {lines} lines: {:.0} MB/s by wall clock, {:.0} MB/s by CPU time",
        rate(wall),
        rate(cpu)
    );
    assert!(lines > 0);
}

#[test]
#[ignore = "a measurement: run in release with --ignored --nocapture"]
fn summarize_throughput() {
    match std::env::var_os("GANGER_BIG_STREAM") {
        Some(path) => measure(&path.to_string_lossy(), &std::fs::read(&path).unwrap()),
        None => {
            measure("launcher-shaped", &common::big_stream(100_000_000));
            measure("large outputs", &common::work_stream(100_000_000));
        }
    }
}

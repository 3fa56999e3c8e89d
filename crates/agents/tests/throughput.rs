//! How fast `summarize_bytes` reads a big OpenCode stream. Ignored by default; run in release:
//!
//! ```sh
//! cargo test --release -p ganger-agents --test throughput -- --ignored --nocapture
//! GANGER_BIG_STREAM=big.jsonl cargo test --release -p ganger-agents --test throughput -- --ignored --nocapture
//! ```
//!
//! Without `GANGER_BIG_STREAM` it reads a generated stream of about 100 MB shaped like the
//! seed's fake launcher's (`FAKE_EVENTS=…`).

mod common;

use ganger_agents::opencode::summarize_bytes;
use std::time::Instant;

#[test]
#[ignore = "a measurement: run in release with --ignored --nocapture"]
fn summarize_throughput() {
    let (name, data) = match std::env::var_os("GANGER_BIG_STREAM") {
        Some(path) => (
            path.to_string_lossy().into_owned(),
            std::fs::read(&path).unwrap(),
        ),
        None => ("generated".to_owned(), common::big_stream(100_000_000)),
    };
    let mut best = f64::MAX;
    let mut summary = None;
    for _ in 0..5 {
        let start = Instant::now();
        summary = Some(summarize_bytes(std::hint::black_box(&data)));
        best = best.min(start.elapsed().as_secs_f64());
    }
    let summary = summary.unwrap();
    let megabytes = data.len() as f64 / 1e6;
    println!(
        "{name}: {megabytes:.1} MB, {} lines, best of 5 {:.1} ms, {:.0} MB/s",
        summary.lines,
        best * 1e3,
        megabytes / best
    );
    assert!(summary.lines > 0);
}

//! `ganger-fuzz --format NAME --seconds N [--seed S]`: feeds one stream format's parser
//! mutated streams for N seconds and fails on the first panic, or on the first stream whose
//! summary through the round's path (`feed`) differs from folding the full parse of each line
//! (`parse_line`), saving the input to `fuzz-crash-NAME.jsonl`.
//!
//! cargo-fuzz needs a nightly compiler, which this project's machines do not have; this is a
//! plain mutation fuzzer on stable: seeded with the agents' real streams (the test fixtures),
//! it mutates bytes, JSON values and whole lines, and splices lines of different streams.

mod mutate;
mod rng;

use ganger_agents::{AgentExit, StreamParser};
use ganger_events::RoundSummary;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The formats, each with the fixtures that seed it.
const FORMATS: [(&str, &[&str]); 6] = [
    ("opencode", &["opencode"]),
    ("claude", &["claude"]),
    ("codex", &["codex"]),
    ("gemini", &["gemini"]),
    ("qwen", &["qwen", "claude"]),
    ("text", &["opencode", "claude"]),
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../agents/tests/fixtures")
}

fn seeds(dirs: &[&str]) -> Result<Vec<Vec<u8>>, String> {
    let mut lines = Vec::new();
    for dir in dirs {
        let path = fixtures_dir().join(dir);
        let entries = std::fs::read_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for entry in entries.flatten() {
            let data = std::fs::read(entry.path()).map_err(|e| e.to_string())?;
            lines.extend(
                data.split(|b| *b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(<[u8]>::to_vec),
            );
        }
    }
    if lines.is_empty() {
        return Err(format!("no seed lines under {dirs:?}"));
    }
    Ok(lines)
}

fn parser(format: &str) -> Box<dyn StreamParser> {
    if format == "text" {
        return ganger_agents::command::adapter("text")
            .map(|a| a.stream_parser())
            .unwrap_or_else(|| unreachable!("the text format exists"));
    }
    match ganger_agents::adapter(format) {
        Some(adapter) => adapter.stream_parser(),
        None => unreachable!("checked before"),
    }
}

/// Runs one stream through both paths and the verdict; the error describes a mismatch.
fn check(format: &str, stream: &[u8]) -> Result<(), String> {
    let fed = ganger_agents::summarize_stream(parser(format).as_mut(), stream);
    let mut full = parser(format);
    let mut folded = RoundSummary::default();
    for line in ganger_agents::scan::lines(stream) {
        full.parse_line(line).fold_into(&mut folded);
    }
    if fed != folded {
        return Err(format!(
            "feed and fold disagree:\nfeed: {fed:?}\nfold: {folded:?}"
        ));
    }
    let adapter = if format == "text" {
        ganger_agents::command::adapter("text")
    } else {
        ganger_agents::adapter(format)
    };
    if let Some(adapter) = adapter {
        for exit in [AgentExit::Code(0), AgentExit::Code(1), AgentExit::Signal(9)] {
            let verdict = adapter.verdict(&fed, exit);
            if !verdict.done && verdict.reason.as_deref().is_none_or(str::is_empty) {
                return Err("a failed verdict without a reason".into());
            }
        }
    }
    Ok(())
}

struct Options {
    format: String,
    seconds: u64,
    seed: u64,
}

fn options() -> Result<Options, String> {
    let mut format = None;
    let mut seconds = 60;
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--format" => format = Some(value),
            "--seconds" => seconds = value.parse().map_err(|_| "--seconds takes a number")?,
            "--seed" => seed = value.parse().map_err(|_| "--seed takes a number")?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    let format = format.ok_or("usage: ganger-fuzz --format NAME --seconds N [--seed S]")?;
    if !FORMATS.iter().any(|(name, _)| *name == format) {
        let names: Vec<&str> = FORMATS.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "unknown format {format:?}; formats: {}",
            names.join(", ")
        ));
    }
    Ok(Options {
        format,
        seconds,
        seed,
    })
}

#[expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line tool"
)]
fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("ganger-fuzz: {message}");
            return ExitCode::from(2);
        }
    };
    let dirs = FORMATS
        .iter()
        .find(|(name, _)| *name == options.format)
        .map_or(&[][..], |(_, dirs)| *dirs);
    let corpus = match seeds(dirs) {
        Ok(corpus) => corpus,
        Err(message) => {
            eprintln!("ganger-fuzz: {message}");
            return ExitCode::from(2);
        }
    };
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = rng::Rng::new(options.seed);
    let limit = Duration::from_secs(options.seconds);
    let clock = Instant::now();
    let mut runs: u64 = 0;
    let mut bytes: u64 = 0;
    while clock.elapsed() < limit {
        for _ in 0..256 {
            let stream = mutate::stream(&mut rng, &corpus);
            bytes += stream.len() as u64;
            runs += 1;
            let format = options.format.as_str();
            let outcome = std::panic::catch_unwind(|| check(format, &stream));
            let problem = match outcome {
                Ok(Ok(())) => continue,
                Ok(Err(mismatch)) => mismatch,
                Err(panic) => format!(
                    "panic: {}",
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default()
                ),
            };
            let file = format!("fuzz-crash-{format}.jsonl");
            let _ = std::fs::write(&file, &stream);
            eprintln!(
                "ganger-fuzz: {format}: after {runs} streams (seed {}): {problem}\ninput saved to {file}",
                options.seed
            );
            return ExitCode::from(1);
        }
    }
    println!(
        "ganger-fuzz: {}: {runs} streams, {:.1} MB, {:.0} s, seed {}: no panic, feed always equal to fold",
        options.format,
        bytes as f64 / 1e6,
        clock.elapsed().as_secs_f64(),
        options.seed
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_accepts_its_seeds_and_mutations_repeat_from_the_seed() {
        for (format, dirs) in FORMATS {
            let corpus = seeds(dirs).unwrap();
            let whole: Vec<u8> = corpus
                .iter()
                .flat_map(|l| [l.as_slice(), b"\n"].concat())
                .collect();
            assert_eq!(check(format, &whole), Ok(()), "{format}");
            let mut a = rng::Rng::new(42);
            let mut b = rng::Rng::new(42);
            let first = mutate::stream(&mut a, &corpus);
            assert_eq!(first, mutate::stream(&mut b, &corpus), "{format}");
            assert!(!first.is_empty());
        }
    }
}

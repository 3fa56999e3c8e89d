//! Copying an agent's stdout and stderr to the round's files while it runs. Each line is
//! redacted of the run's keys before it is written; stdout lines are also fed to the adapter's
//! stream parser, which keeps the round's summary and says whether the line was progress;
//! stderr lines go to the adapter's [`Adapter::stderr_event`] (Codex logs refused calls only
//! there), whose events join the summary too. The files are flushed whenever the pipe has
//! nothing more buffered, so `ganger log --follow` and `ganger status` see a running round as
//! it goes.

use crate::redact::Redactor;
use ganger_agents::{Adapter, StreamParser};
use ganger_events::RoundSummary;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What the stdout reader shares with the host's loop.
#[derive(Debug)]
pub(crate) struct Progress {
    pub summary: RoundSummary,
    /// When the stream last showed progress.
    pub last_progress: Instant,
    /// Whether the summary changed since the host last stored it.
    pub dirty: bool,
}

/// A reader thread ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    Stdout,
    Stderr,
}

/// Reads the agent's stdout to its end.
pub(crate) fn read_stdout(
    pipe: impl Read,
    file: File,
    redactor: Redactor,
    mut parser: Box<dyn StreamParser>,
    progress: Arc<Mutex<Progress>>,
    closed: Sender<Closed>,
) {
    let mut reader = BufReader::with_capacity(256 * 1024, pipe);
    let mut writer = BufWriter::with_capacity(256 * 1024, file);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let redacted = redactor.redact(&line);
        let _ = writer.write_all(&redacted);
        let raw_line = redacted.strip_suffix(b"\n").unwrap_or(&redacted);
        // The same cut as a finished stream's (`scan::line_content`): parsers see equal lines.
        if let Some(content) = ganger_agents::scan::line_content(raw_line) {
            let mut shared = match progress.lock() {
                Ok(shared) => shared,
                Err(poisoned) => poisoned.into_inner(),
            };
            let fed = parser.feed(content, &mut shared.summary);
            shared.dirty = true;
            if fed.progress {
                shared.last_progress = Instant::now();
            }
        }
        if reader.buffer().is_empty() {
            let _ = writer.flush();
        }
    }
    let _ = writer.flush();
    let _ = closed.send(Closed::Stdout);
}

/// Reads the agent's stderr to its end; the events `adapter` reads in it join the summary.
pub(crate) fn read_stderr(
    pipe: impl Read,
    file: File,
    redactor: Redactor,
    adapter: &dyn Adapter,
    progress: Arc<Mutex<Progress>>,
    closed: Sender<Closed>,
) {
    let mut reader = BufReader::new(pipe);
    let mut writer = BufWriter::new(file);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let redacted = redactor.redact(&line);
        let _ = writer.write_all(&redacted);
        if let Some(event) = adapter.stderr_event(&redacted) {
            let mut shared = match progress.lock() {
                Ok(shared) => shared,
                Err(poisoned) => poisoned.into_inner(),
            };
            shared.summary.apply(&event);
            shared.dirty = true;
        }
        if reader.buffer().is_empty() {
            let _ = writer.flush();
        }
    }
    let _ = writer.flush();
    let _ = closed.send(Closed::Stderr);
}

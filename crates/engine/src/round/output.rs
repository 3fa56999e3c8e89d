//! Copying an agent's stdout and stderr to the round's streams while it runs. What the agent
//! prints is redacted of the run's keys as it arrives (a key split between two reads is still
//! found), then appended to the round's stream in the store; stdout is also cut into lines for the adapter's
//! stream parser, which keeps the round's summary and says whether the line was progress, and
//! stderr's lines go to the adapter's [`Adapter::stderr_event`] (an agent may log refused calls
//! only there), whose events join the summary too. Memory stays bounded whatever the agent prints:
//! a read at a time, the few bytes of an unfinished line the redactor holds back, and at most
//! `scan::MAX_LINE` of a line for the parser (a longer line is counted in the summary, not
//! read; the stream keeps its bytes). Each read is appended as it comes, so `ganger log
//! --follow` and `ganger status` see a running round as it goes.

use crate::base::redact::Redactor;
use crate::base::redact_stream::copy_redacted;
use ganger_agents::scan::{Line, LineCutter};
use ganger_agents::{Adapter, StreamParser};
use ganger_events::RoundSummary;
use std::io::{Read, Write};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What the stdout reader shares with the host's loop.
#[derive(Debug)]
pub(crate) struct Progress {
    pub summary: RoundSummary,
    /// When the stream last showed progress.
    pub last_progress: Instant,
    /// The agent's last word was a retry notice (it is waiting to reach its model): what its
    /// processes do meanwhile is its retrying, not work (see [`super::watchdog`]).
    pub retrying: bool,
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
    mut stream: Box<dyn Write + Send>,
    redactor: Redactor,
    mut parser: Box<dyn StreamParser>,
    progress: Arc<Mutex<Progress>>,
    closed: Sender<Closed>,
) {
    let mut cutter = LineCutter::default();
    let mut feed = |clean: &[u8], end: bool| {
        let _ = stream.write_all(clean);
        let mut shared = match progress.lock() {
            Ok(shared) => shared,
            Err(poisoned) => poisoned.into_inner(),
        };
        let shared = &mut *shared;
        let mut fed_any = false;
        let mut each = |_, line: Line<'_>| {
            let retries = shared.summary.retries;
            let fed = ganger_agents::feed_line(parser.as_mut(), line, &mut shared.summary);
            fed_any = true;
            if fed.progress {
                shared.last_progress = Instant::now();
                shared.retrying = false;
            } else if shared.summary.retries > retries {
                shared.retrying = true;
            }
        };
        cutter.push(clean, &mut each);
        if end {
            cutter.finish(&mut each);
        }
        if fed_any {
            shared.dirty = true;
        }
    };
    copy_redacted(pipe, redactor, &mut feed);
    let _ = closed.send(Closed::Stdout);
}

/// Reads the agent's stderr to its end; the events `adapter` reads in it join the summary.
pub(crate) fn read_stderr(
    pipe: impl Read,
    mut stream: Box<dyn Write + Send>,
    redactor: Redactor,
    adapter: &dyn Adapter,
    progress: Arc<Mutex<Progress>>,
    closed: Sender<Closed>,
) {
    let mut cutter = LineCutter::default();
    copy_redacted(pipe, redactor, &mut |clean, end| {
        let _ = stream.write_all(clean);
        let mut each = |_, line: Line<'_>| {
            if let Line::Content(line) = line
                && let Some(event) = adapter.stderr_event(line)
            {
                let mut shared = match progress.lock() {
                    Ok(shared) => shared,
                    Err(poisoned) => poisoned.into_inner(),
                };
                shared.summary.apply(&event);
                shared.dirty = true;
            }
        };
        cutter.push(clean, &mut each);
        if end {
            cutter.finish(&mut each);
        }
    });
    let _ = closed.send(Closed::Stderr);
}

//! `ganger log`: a round's stream, raw (the file byte for byte) or normalized through the
//! agent's adapter (the same full parse the summary is checked against), optionally followed
//! while the round runs.

use crate::error::{EngineError, Result};
use crate::fix::find_task;
use crate::workspace::Workspace;
use ganger_agents::ParsedLine;
use ganger_events::RoundStatus;
use ganger_sandbox::{HostLock, LockState};
use ganger_store::Store;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::PathBuf;
use std::time::Duration;

/// How often a followed file is checked for more lines.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);

/// What `ganger log` was asked.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    pub slug: String,
    pub round: Option<u32>,
    pub raw: bool,
    pub follow: bool,
}

/// One line of a log.
#[derive(Debug)]
pub enum LogLine<'a> {
    /// A raw line, as the agent printed it (redacted), with its newline.
    Raw(&'a [u8]),
    /// A line read through the adapter.
    Parsed {
        number: u64,
        line: &'a [u8],
        parsed: ParsedLine,
    },
}

/// Which round `log` shows: its task's adapter, file and whether it still runs.
struct Source {
    file: PathBuf,
    lock: PathBuf,
    agent: String,
    running: bool,
}

fn source(ws: &Workspace, options: &LogOptions) -> Result<Source> {
    let Some(store) = ws.existing_store()? else {
        crate::slug::check_slug(&options.slug)?;
        return Err(EngineError::invalid(format!("no task {}", options.slug)));
    };
    let task = find_task(&store, &options.slug)?;
    let round = store
        .round(task.id, options.round)?
        .ok_or_else(|| match options.round {
            Some(n) => EngineError::invalid(format!(
                "task {} has no round {n} (it has {})",
                task.slug, task.rounds
            )),
            None => EngineError::invalid(format!("task {} has no rounds", task.slug)),
        })?;
    Ok(Source {
        file: ws.state.round_file(&task.slug, round.number, "jsonl"),
        lock: round.lock_path.clone(),
        agent: task.agent.clone(),
        running: round.status == RoundStatus::Running,
    })
}

/// Writes the round's log line by line to `out`; with `follow`, until the round ends.
pub fn log(
    ws: &Workspace,
    options: &LogOptions,
    out: &mut dyn FnMut(LogLine<'_>) -> std::io::Result<()>,
) -> Result<()> {
    let source = source(ws, options)?;
    let adapter = crate::start::known_adapter(ws, &source.agent)?;
    let mut parser = adapter.stream_parser();
    let mut file = loop {
        match File::open(&source.file) {
            Ok(file) => break file,
            // A detached host that has not made the file yet: wait while it lives.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    && source.running
                    && options.follow
                    && HostLock::probe(&source.lock) == LockState::Held =>
            {
                std::thread::sleep(FOLLOW_EVERY);
            }
            Err(e) => return Err(EngineError::io("open", &source.file, e)),
        }
    };
    let mut reader = BufReader::new(&mut file);
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut partial = Vec::new();
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| EngineError::io("read", &source.file, e))?;
        if read > 0 && line.ends_with(b"\n") {
            let mut whole = std::mem::take(&mut partial);
            whole.extend_from_slice(&line);
            number += 1;
            let result = if options.raw {
                out(LogLine::Raw(&whole))
            } else {
                let raw_line = whole.strip_suffix(b"\n").unwrap_or(&whole);
                let Some(content) = ganger_agents::scan::line_content(raw_line) else {
                    continue;
                };
                out(LogLine::Parsed {
                    number,
                    line: content,
                    parsed: parser.parse_line(content),
                })
            };
            if let Err(e) = result {
                // A closed pipe (`ganger log | head`) is a normal end.
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(());
                }
                return Err(EngineError::invalid(format!(
                    "failed to write the log: {e}"
                )));
            }
            continue;
        }
        // End of what is written so far; keep a partial line for when it is finished.
        partial.extend_from_slice(&line);
        if !options.follow || !source.running {
            if !partial.is_empty() && options.raw {
                let _ = out(LogLine::Raw(&partial));
            }
            return Ok(());
        }
        if HostLock::probe(&source.lock) != LockState::Held {
            // The host is gone: read what is left once more, then stop.
            let position = reader.stream_position().unwrap_or(0);
            let length = std::fs::metadata(&source.file).map_or(0, |m| m.len());
            if position >= length {
                return Ok(());
            }
            reader
                .seek(SeekFrom::Start(position))
                .map_err(|e| EngineError::io("read", &source.file, e))?;
            continue;
        }
        std::thread::sleep(FOLLOW_EVERY);
    }
}

//! `ganger log`: a round's stream, raw (the file byte for byte) or normalized through the
//! agent's adapter (the same full parse the summary is checked against), optionally followed
//! while the round runs. The file is read a block at a time and cut into lines as a round cuts
//! them (`scan::LineCutter`): a line over the cap is reported, not read, so the log of any
//! stream takes bounded memory.

use crate::error::{EngineError, Result};
use crate::fix::find_task;
use crate::workspace::Workspace;
use ganger_agents::ParsedLine;
use ganger_agents::scan::{Line, LineCutter};
use ganger_events::RoundStatus;
use ganger_sandbox::{HostLock, LockState};
use std::fs::File;
use std::io::{Read, Seek};
use std::path::PathBuf;
use std::time::Duration;

/// How often a followed file is checked for more lines.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);
/// How much of the file is read at a time.
const READ_SIZE: usize = 256 * 1024;

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
    /// Bytes of the raw stream, as the agent printed them (redacted).
    Raw(&'a [u8]),
    /// A line read through the adapter.
    Parsed {
        number: u64,
        line: &'a [u8],
        parsed: ParsedLine,
    },
    /// A line too long to read (over `scan::MAX_LINE`), of `bytes` bytes.
    TooLong { number: u64, bytes: u64 },
}

/// Which round `log` shows: its task's adapter, file and whether it still runs.
struct Source {
    file: PathBuf,
    lock: PathBuf,
    agent: String,
    keys: std::collections::BTreeMap<String, PathBuf>,
    running: bool,
}

fn source(ws: &Workspace, options: &LogOptions) -> Result<Source> {
    let Some(store) = ws.existing_store()? else {
        crate::slug::check_slug(&options.slug)?;
        return Err(EngineError::invalid(format!("no task {}", options.slug)));
    };
    let task = find_task(&*store, &options.slug)?;
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
        lock: PathBuf::from(round.claim.as_str()),
        agent: task.agent.clone(),
        keys: task.keys.clone(),
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
    // The raw file is redacted; what the parser decodes from it is redacted again with the
    // task's keys (a key file that is gone leaves only the raw file's redaction).
    let redactor = crate::keys::load_keys(&ws.config, &source.keys)
        .map(|keys| crate::keys::LoadedKey::redactor(&keys))
        .unwrap_or_default();
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
    let mut buffer = vec![0u8; READ_SIZE];
    let mut cutter = LineCutter::default();
    loop {
        let read = match file.read(&mut buffer) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(EngineError::io("read", &source.file, e)),
        };
        let ended = read == 0
            && (!options.follow
                || !source.running
                || HostLock::probe(&source.lock) != LockState::Held && {
                    // The host is gone: read what is left once more, then stop.
                    let position = file.stream_position().unwrap_or(0);
                    let length = std::fs::metadata(&source.file).map_or(0, |m| m.len());
                    position >= length
                });
        let mut result = Ok(());
        if options.raw {
            if read > 0 {
                result = out(LogLine::Raw(&buffer[..read]));
            }
        } else {
            let mut each = |number: u64, line: Line<'_>| {
                if result.is_err() {
                    return;
                }
                result = match line {
                    Line::Content(content) => {
                        let mut parsed = parser.parse_line(content);
                        redactor.redact_events(&mut parsed.events);
                        if let Some(kind) = &mut parsed.kind {
                            *kind = redactor.redact_str(kind);
                        }
                        out(LogLine::Parsed {
                            number,
                            line: content,
                            parsed,
                        })
                    }
                    Line::TooLong(bytes) => out(LogLine::TooLong { number, bytes }),
                };
            };
            if read > 0 {
                cutter.push(&buffer[..read], &mut each);
            } else if ended && !source.running {
                // A finished stream's last line needs no newline; a running one's is unfinished.
                cutter.finish(&mut each);
            }
        }
        if let Err(e) = result {
            // A closed pipe (`ganger log | head`) is a normal end.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(EngineError::invalid(format!(
                "failed to write the log: {e}"
            )));
        }
        if ended {
            return Ok(());
        }
        if read == 0 {
            std::thread::sleep(FOLLOW_EVERY);
        }
    }
}

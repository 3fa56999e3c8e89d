//! `ganger log`: a round's stream, raw (byte for byte) or normalized through the agent's
//! adapter (the same full parse the summary is checked against), optionally followed while
//! the round runs (the store's follow: it ends when the round's claim does). The stream is
//! read a block at a time and cut into lines as a round cuts them (`scan::LineCutter`): a line
//! over the cap is reported, not read, so the log of any stream takes bounded memory.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use crate::task::lookup::find_task;
use ganger_agents::ParsedLine;
use ganger_agents::scan::{Line, LineCutter};
use ganger_events::RoundStatus;
use ganger_store::{Backend, ClaimKey, RoundStream, StreamKind};
use std::io::Read;
use std::path::PathBuf;

/// How much of the stream is read at a time.
const READ_SIZE: usize = 256 * 1024;

/// What `ganger log` was asked.
#[derive(Debug, Clone, Default)]
pub struct LogOptions {
    pub slug: String,
    pub round: Option<u32>,
    pub raw: bool,
    pub follow: bool,
    /// The round's model gateway's requests (one JSON line each) instead of its agent's
    /// stream.
    pub gateway: bool,
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

/// Which round `log` shows: its stream and claim in the store, its task's adapter, and
/// whether it still runs.
struct Source {
    store: Box<dyn Backend>,
    stream: RoundStream,
    claim: ClaimKey,
    /// Where the stream is, for a message (the round's file on SQLite).
    file: PathBuf,
    agent: String,
    keys: std::collections::BTreeMap<String, PathBuf>,
    running: bool,
}

fn source(ws: &Workspace, options: &LogOptions) -> Result<Source> {
    let Some(store) = ws.existing_store()? else {
        crate::base::slug::check_slug(&options.slug)?;
        return Err(EngineError::not_found(format!("no task {}", options.slug)));
    };
    let task = find_task(&*store, &options.slug)?;
    let round = store
        .round(task.id, options.round)?
        .ok_or_else(|| match options.round {
            Some(n) => EngineError::not_found(format!(
                "task {} has no round {n} (it has {})",
                task.slug, task.rounds
            )),
            None => EngineError::invalid(format!("task {} has no rounds", task.slug)),
        })?;
    let (kind, ext) = if options.gateway {
        (StreamKind::Gateway, "gateway.jsonl")
    } else {
        (StreamKind::Stdout, "jsonl")
    };
    Ok(Source {
        stream: RoundStream::of(&task, &round, kind),
        file: ws.state.round_file(&task.slug, round.number, ext),
        claim: round.claim.clone(),
        agent: task.agent.clone(),
        keys: task.keys.clone(),
        running: round.status == RoundStatus::Running,
        store,
    })
}

/// The round's agent never started, so it has no stream (or, for the gateway's, the round
/// had no gateway).
fn no_stream(source: &Source) -> EngineError {
    if source.stream.kind == StreamKind::Gateway {
        return EngineError::invalid(format!(
            "round {} of {} had no model gateway (no key held back, and a network other than gateway)",
            source.stream.number, source.stream.slug
        ));
    }
    EngineError::invalid(format!(
        "round {} of {} has no output: its agent never started",
        source.stream.number, source.stream.slug
    ))
}

/// Writes the round's log line by line to `out`; with `follow`, until the round ends.
pub fn log(
    ws: &Workspace,
    options: &LogOptions,
    out: &mut dyn FnMut(LogLine<'_>) -> std::io::Result<()>,
) -> Result<()> {
    let source = source(ws, options)?;
    let adapter = crate::task::admission::known_adapter(ws, &source.agent)?;
    // The raw stream is redacted; what the parser decodes from it is redacted again with the
    // task's keys (a key file that is gone leaves only the raw stream's redaction).
    let redactor = crate::env::keys::load_keys(&ws.config, &source.keys)
        .map(|keys| crate::env::keys::LoadedKey::redactor(&ws.store, &keys))
        .unwrap_or_default();
    let mut parser: Box<dyn ganger_agents::StreamParser> =
        Box::new(ganger_agents::acp::WarmOrCold::of(adapter));
    let following = options.follow && source.running;
    let mut reader: Box<dyn Read + '_> = if following {
        // A detached host that has not made the stream yet is waited for while it lives.
        source
            .store
            .follow_stream(&source.stream, &source.claim, 0)?
    } else {
        source
            .store
            .read_stream(&source.stream, 0)?
            .ok_or_else(|| no_stream(&source))?
    };
    let mut buffer = vec![0u8; READ_SIZE];
    let mut cutter = LineCutter::default();
    loop {
        // A follow returns 0 only once the round has ended and all of its stream is read.
        let read = match reader.read(&mut buffer) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && following => {
                return Err(no_stream(&source));
            }
            Err(e) => return Err(EngineError::io("read", &source.file, e)),
        };
        let ended = read == 0;
        let mut result = Ok(());
        // The gateway's lines are JSON already, and hold nothing to redact.
        if options.raw || options.gateway {
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
            return Err(EngineError::environment("failed to write the log", e));
        }
        if ended {
            return Ok(());
        }
    }
}

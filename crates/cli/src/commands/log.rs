//! `ganger log`: normalized events as readable lines or JSON lines, or the raw stream. Terminal
//! controls from the agent are escaped as the printer escapes them (the raw stream only on a
//! terminal: in a file or a pipe it stays byte for byte).

use crate::Outcome;
use crate::args::LogArgs;
use crate::exit;
use crate::printer::{self, Printer};
use ganger_engine::documents::LogLineDocument;
use ganger_engine::{Engine, LogLine, LogOptions};
use ganger_events::Event;
use std::io::{IsTerminal, Write};

fn describe(event: &Event) -> String {
    match event {
        Event::Session { id } => format!("session {id}"),
        Event::StepStarted => "step started".into(),
        Event::StepFinished { reason, usage } => format!(
            "step finished ({}), tokens {} in / {} out{}",
            reason.as_deref().unwrap_or("no reason"),
            usage.input,
            usage.output,
            usage
                .cost_usd
                .map(|c| format!(", ${c:.4}"))
                .unwrap_or_default()
        ),
        Event::Text { text } => {
            let first = text.lines().next().unwrap_or_default();
            let more = if text.lines().count() > 1 { " ..." } else { "" };
            format!("text: {first}{more}")
        }
        Event::Tool {
            name,
            status,
            title,
            error,
        } => {
            let mut line = format!("tool {name} {status:?}").to_lowercase();
            if let Some(title) = title {
                line.push_str(&format!(": {title}"));
            }
            if let Some(error) = error {
                line.push_str(&format!(" ({error})"));
            }
            line
        }
        Event::PermissionRejected { tool, message } => {
            format!("permission rejected: {tool}: {message}")
        }
        Event::PermissionGranted { tool, rule } => {
            format!("permission granted: {tool}: {rule}")
        }
        Event::Error {
            name,
            message,
            status_code,
            ..
        } => {
            let code = status_code
                .map(|c| format!(" (HTTP {c})"))
                .unwrap_or_default();
            match name.as_str() {
                // ganger's own (a warm host's): no class to name.
                "" => format!("error{code}: {message}"),
                _ => format!("error {name}{code}: {message}"),
            }
        }
        Event::Retry { message } => format!("retry: {message}"),
        Event::ToolStarted { name, title } => match title {
            Some(title) => format!("tool {name} started: {title}"),
            None => format!("tool {name} started"),
        },
        Event::Ended => "the agent's last event of the round".into(),
        Event::Usage { usage } => {
            format!("spent so far: {} in / {} out", usage.input, usage.output)
        }
        Event::Gateway { tally } => format!(
            "the gateway's count of the turn: {} model requests, {} in / {} out",
            tally.requests, tally.input_tokens, tally.output_tokens
        ),
        Event::Unknown { kind } => format!("unknown event type {kind:?}"),
    }
}

/// A line of the stream read, as a person reads it.
fn line_text(line: &LogLine<'_>) -> String {
    match line {
        // Written as it is, never as a line of ours.
        LogLine::Raw(_) => String::new(),
        LogLine::TooLong { number, bytes } => format!(
            "{number:>5} not read: a line of {bytes} bytes, over the cap of {} MiB\n",
            ganger_agents::scan::MAX_LINE >> 20
        ),
        LogLine::Parsed {
            number,
            line,
            parsed,
        } => match &parsed.kind {
            None => format!(
                "{number:>5} malformed: {}\n",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            ),
            Some(kind) => {
                let texts: Vec<String> = parsed
                    .events
                    .iter()
                    .filter(|e| !matches!(e, Event::Session { .. }))
                    .map(describe)
                    .collect();
                format!("{number:>5} {kind}: {}\n", texts.join("; "))
            }
        },
    }
}

pub(crate) fn run(engine: &Engine, args: LogArgs) -> Outcome {
    let options = LogOptions {
        slug: args.slug,
        round: args.round,
        raw: args.raw,
        follow: args.follow,
        gateway: args.gateway,
    };
    let printer = Printer::new(args.json);
    let stdout = std::io::stdout();
    // The raw stream stays exact for a file or a pipe; on a terminal its controls are escaped.
    let raw_escaped = stdout.is_terminal();
    let mut write = |line: LogLine<'_>| -> std::io::Result<()> {
        if let LogLine::Raw(bytes) = line {
            let mut out = stdout.lock();
            if raw_escaped {
                let text = String::from_utf8_lossy(bytes);
                out.write_all(printer::escape_controls(&text).as_bytes())?;
            } else {
                out.write_all(bytes)?;
            }
            return out.flush();
        }
        match LogLineDocument::of(&line) {
            Some(document) => printer.item(&document, || line_text(&line)),
            None => Ok(()),
        }
    };
    engine.log(&options, &mut write)?;
    Ok(exit::OK)
}

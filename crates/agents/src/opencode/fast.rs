//! The summary's fast path. A long run prints tens of thousands of lines, nearly all of them
//! `tool_use` lines of calls that completed, with `step_start`, `step_finish` and `text` lines
//! between them. For those the scanner proves that the line is valid JSON and lends out the
//! few fields the summary needs; the summary is then updated through the same fold as the full
//! parse, without reading the line into a `serde_json::Value`.
//!
//! Exactness rule: each function here returns `None` (and the line goes through the full parse)
//! whenever a field is not in the one shape it can read exactly as the full parse reads it.
//! `error` lines and failed tool calls always take the full parse: they are rare and they
//! decide a round's fate.

use crate::Feed;
use crate::scan::{self, Field, FieldTable, Kind, Raw, Scan};
use ganger_events::{Event, RoundSummary, ToolStatus, Usage, UsageMode};

const TYPE: usize = 0;
const SESSION: usize = 1;
const PART: usize = 2;
const STATE: usize = 3;
const STATUS: usize = 4;
const TEXT: usize = 5;
const REASON: usize = 6;
const COST: usize = 7;
const TOKENS: usize = 8;
const INPUT: usize = 9;
const OUTPUT: usize = 10;
const REASONING: usize = 11;
const CACHE: usize = 12;
const CACHE_READ: usize = 13;
const CACHE_WRITE: usize = 14;

/// The fields the fast path reads (and the objects on the way to them, so that duplicates
/// there are seen).
const FIELDS: FieldTable<15> = FieldTable::new([
    Field::top("type"),
    Field::top("sessionID"),
    Field::top("part"),
    Field::inside(PART, "state"),
    Field::inside(STATE, "status"),
    Field::inside(PART, "text"),
    Field::inside(PART, "reason"),
    Field::inside(PART, "cost"),
    Field::inside(PART, "tokens"),
    Field::inside(TOKENS, "input"),
    Field::inside(TOKENS, "output"),
    Field::inside(TOKENS, "reasoning"),
    Field::inside(TOKENS, "cache"),
    Field::inside(CACHE, "read"),
    Field::inside(CACHE, "write"),
]);

type Found<'a> = [Option<Raw<'a>>; FIELDS.fields().len()];

/// Feeds `line` into `summary` when the scanner can prove what the full parse would make of it;
/// `None`, with `summary` untouched, when the line needs the full parse.
pub(crate) fn feed(line: &[u8], summary: &mut RoundSummary) -> Option<Feed> {
    let mut found: Found<'_> = [None; FIELDS.fields().len()];
    match scan::scan_fields_into(line, &FIELDS, &mut found) {
        Scan::Valid(()) => {}
        Scan::Invalid => return Some(malformed(summary)),
        Scan::Unsure => return None,
    }
    let Some(kind) = found[TYPE] else {
        // Valid JSON, but not an object with a `type`.
        return Some(malformed(summary));
    };
    if kind.is_plain("tool_use") {
        record(summary, &found, "tool_use", Some(tool(&found)?))
    } else if kind.is_plain("step_start") {
        record(summary, &found, "step_start", Some(&Event::StepStarted))
    } else if kind.is_plain("step_finish") {
        record(
            summary,
            &found,
            "step_finish",
            Some(&step_finished(&found)?),
        )
    } else if kind.is_plain("text") {
        record(summary, &found, "text", Some(&text(&found)?))
    } else if kind.is_plain("reasoning") {
        record(summary, &found, "reasoning", None)
    } else if kind.is_plain("error") {
        None
    } else {
        match kind.kind {
            // An escaped type might decode to a known one.
            Kind::String { escaped: true } => None,
            Kind::String { escaped: false } => {
                let kind = kind.plain_str()?;
                let unknown = Event::Unknown {
                    kind: kind.to_owned(),
                };
                record(summary, &found, kind, Some(&unknown))
            }
            // A `type` that is not a string.
            _ => Some(malformed(summary)),
        }
    }
}

/// Counts a line of type `kind` and applies its session, then `event`, as folding the line's
/// full parse does; `None`, with `summary` untouched, when the session cannot be read exactly.
/// The event is lent, not moved, so that the hot path does not copy it around.
fn record(
    summary: &mut RoundSummary,
    found: &Found<'_>,
    kind: &str,
    event: Option<&Event>,
) -> Option<Feed> {
    let session = match (&summary.session, found[SESSION]) {
        (None, Some(raw)) if matches!(raw.kind, Kind::String { .. }) => Some(raw.string()?),
        // A known session cannot change, and a non-string `sessionID` yields no event.
        _ => None,
    };
    summary.record_line(kind);
    if let Some(id) = session {
        summary.apply(&Event::Session { id });
    }
    if let Some(event) = event {
        summary.apply(event);
    }
    Some(Feed { progress: true })
}

fn malformed(summary: &mut RoundSummary) -> Feed {
    summary.record_malformed();
    Feed { progress: false }
}

/// Whether `part` is an object (`Some(false)` when it is something else, `None` when absent).
fn part_object(found: &Found<'_>) -> Option<bool> {
    found[PART].map(|raw| raw.kind == Kind::Object)
}

/// The event of a tool call of `status` as the fast path makes it: the name, title and error
/// of a tool event do not reach the summary, so they are left empty, and the event is built
/// once rather than for every line.
const fn tool_event(status: ToolStatus) -> Event {
    Event::Tool {
        name: String::new(),
        status,
        title: None,
        error: None,
    }
}

static COMPLETED_TOOL: Event = tool_event(ToolStatus::Completed);
static RUNNING_TOOL: Event = tool_event(ToolStatus::Running);

/// The event of a tool call that did not fail: `part` and `part.state` are objects and
/// `part.state.status` is a plain `completed`, `running` or `pending`.
fn tool(found: &Found<'_>) -> Option<&'static Event> {
    if !part_object(found)? || found[STATE]?.kind != Kind::Object {
        return None;
    }
    let status = found[STATUS]?;
    if status.is_plain("completed") {
        Some(&COMPLETED_TOOL)
    } else if status.is_plain("running") || status.is_plain("pending") {
        Some(&RUNNING_TOOL)
    } else {
        None
    }
}

/// The event of a `text` line whose part is an object with a string `text`.
fn text(found: &Found<'_>) -> Option<Event> {
    if !part_object(found)? {
        return None;
    }
    let text = found[TEXT]?;
    if !matches!(text.kind, Kind::String { .. }) {
        return None;
    }
    Some(Event::Text {
        text: text.string()?,
    })
}

/// The event of a `step_finish` whose part is an object. A field of another JSON type reads as
/// absent, as in the wire types; a number the fast path cannot read exactly sends the line to
/// the full parse.
fn step_finished(found: &Found<'_>) -> Option<Event> {
    if !part_object(found)? {
        return None;
    }
    let reason = match found[REASON] {
        Some(raw) if matches!(raw.kind, Kind::String { .. }) => Some(raw.string()?),
        _ => None,
    };
    let cost_usd = match found[COST] {
        Some(raw) if raw.kind == Kind::Number => Some(raw.f64()?),
        _ => None,
    };
    // Fields of `tokens` and `cache` are captured only when those are objects.
    let count = |index: usize| match found[index] {
        Some(raw) if raw.kind == Kind::Number => raw.plain_u64(),
        _ => Some(0),
    };
    Some(Event::StepFinished {
        reason,
        usage: Usage {
            input: count(INPUT)?,
            output: count(OUTPUT)?,
            reasoning: count(REASONING)?,
            cache_read: count(CACHE_READ)?,
            cache_write: count(CACHE_WRITE)?,
            cost_usd,
            mode: UsageMode::Delta,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDED: [&[u8]; 6] = [
        include_bytes!("../../tests/fixtures/opencode/opencode-round1.jsonl"),
        include_bytes!("../../tests/fixtures/opencode/opencode-round2.jsonl"),
        include_bytes!("../../tests/fixtures/opencode/opencode-shell.jsonl"),
        include_bytes!("../../tests/fixtures/opencode/opencode-attach-round1.jsonl"),
        include_bytes!("../../tests/fixtures/opencode/opencode-error-500.jsonl"),
        include_bytes!("../../tests/fixtures/opencode/opencode-perm-ask-autorejected.jsonl"),
    ];

    #[test]
    fn recorded_lines_take_the_fast_path_unless_they_decide_a_failure() {
        let mut taken = 0;
        for stream in RECORDED {
            for line in scan::lines(stream) {
                let text = String::from_utf8_lossy(line);
                let decisive =
                    text.contains(r#""type":"error""#) || text.contains(r#""status":"error""#);
                let mut summary = RoundSummary::default();
                assert_eq!(feed(line, &mut summary).is_some(), !decisive, "{text}");
                taken += usize::from(!decisive);
            }
        }
        assert_eq!(taken, 4 * 6 + 2);
    }

    #[test]
    fn an_escaped_session_is_decoded_as_serde_json_decodes_it() {
        let line = br#"{"type":"step_start","sessionID":"ses_\u0031\n"}"#;
        let mut summary = RoundSummary::default();
        assert_eq!(feed(line, &mut summary), Some(Feed { progress: true }));
        assert_eq!(summary.session.as_deref(), Some("ses_1\n"));
    }
}

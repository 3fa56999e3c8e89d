//! A judge's answer: what its round answered, read from the round's answer file, else from
//! its summary (whichever way the judge was run: here, or through the queue).

use crate::env::workspace::Workspace;
use ganger_store::Round;

/// The answer of the judge's `round` of task `slug`.
pub(super) fn answer_of(ws: &Workspace, slug: &str, round: &Round) -> String {
    std::fs::read_to_string(ws.state.round_file(slug, round.number, "answer.md"))
        .ok()
        .or_else(|| round.summary.answer.clone())
        .unwrap_or_default()
}

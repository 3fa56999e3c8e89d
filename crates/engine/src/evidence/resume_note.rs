//! The note a new session begins with when the task's conversation cannot be continued: the
//! earlier rounds in order, each prompt and answer trimmed to 2,000 characters. A rewind that
//! cannot fork the agent's session leaves one (the rounds kept), and so does a task whose
//! earlier rounds never named a session (`lost_session.rs`), so that the brief is never
//! replaced by a bare "continue".

use crate::env::workspace::Workspace;
use ganger_store::{Round, Task};

/// The most characters of each round's prompt and answer in a summary.
const SUMMARY_CHARS: usize = 2000;

/// The line between a summary and the round's own prompt.
const NOTE_END: &str = "Now the request of this round:\n\n";

/// How every summary begins (each note's first words), so a prompt can drop it again.
const OPENINGS: [&str; 2] = [
    "This task continues earlier work",
    "This task continues earlier rounds",
];

/// `header`, then each of `rounds` with its prompt (without a summary it began with) and its
/// answer, then the line before this round's own prompt.
pub(crate) fn summary(ws: &Workspace, task: &Task, rounds: &[&Round], header: &str) -> String {
    summary_with(ws, task, rounds, header, &|_| None)
}

/// [`summary`], with `prompt_of` for a round whose prompt file is not on this host (it ran on
/// another).
pub(crate) fn summary_with(
    ws: &Workspace,
    task: &Task,
    rounds: &[&Round],
    header: &str,
    prompt_of: &dyn Fn(u32) -> Option<String>,
) -> String {
    let mut note = String::from(header);
    for round in rounds {
        let read = |ext: &str| {
            std::fs::read_to_string(ws.state.round_file(&task.slug, round.number, ext)).ok()
        };
        let prompt = read("prompt.md")
            .or_else(|| prompt_of(round.number))
            .unwrap_or_else(|| "(its prompt is not kept on this host)".into());
        let prompt = strip_note(&prompt);
        let answer = read("answer.md")
            .or_else(|| round.summary.answer.clone())
            .unwrap_or_else(|| "(no answer)".into());
        note.push_str(&format!(
            "Round {} ({}):\n{}Your answer:\n{}\n",
            round.number,
            round.status.as_str(),
            quoted(&clip(prompt, SUMMARY_CHARS)),
            quoted(&clip(&answer, SUMMARY_CHARS)),
        ));
    }
    note.push_str(NOTE_END);
    note
}

fn clip(text: &str, limit: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{} [...]", &text[..at]),
        None => text.to_owned(),
    }
}

fn quoted(text: &str) -> String {
    text.lines()
        .map(|line| format!("> {line}\n"))
        .collect::<String>()
}

/// A prompt without the summary it began with, if any.
pub(crate) fn strip_note(prompt: &str) -> &str {
    match prompt.find(NOTE_END) {
        Some(at) if OPENINGS.iter().any(|o| prompt.starts_with(o)) => {
            &prompt[at + NOTE_END.len()..]
        }
        _ => prompt,
    }
}

/// The prompt a round sends: the task's note first when its session was not kept.
pub(crate) fn with_resume_note(task: &Task, prompt: String) -> String {
    match (&task.resume_note, &task.session) {
        (Some(note), None) => format!("{note}{prompt}"),
        _ => prompt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_prompt_loses_the_summary_it_began_with() {
        let prompt = format!("This task continues earlier work, rounds...\n{NOTE_END}Do b.");
        assert_eq!(strip_note(&prompt), "Do b.");
        let lost = format!("This task continues earlier rounds whose...\n{NOTE_END}Do c.");
        assert_eq!(strip_note(&lost), "Do c.");
        assert_eq!(strip_note("Do a."), "Do a.");
        assert_eq!(clip("abcdef", 3), "abc [...]");
        assert_eq!(quoted("a\nb"), "> a\n> b\n");
    }
}

//! Context an agent adds to a user message, told apart from what was typed.
//!
//! Claude Code (Messages) and Qwen Code 0.24 (chat completions) put context into the user
//! message that carries the prompt, as separate text parts each wrapped in
//! `<system-reminder>…</system-reminder>`: the skills and tools on offer, the date, CLAUDE.md.
//! Such a part is not the person's prompt: protocols leave it out of the prompt's text, and a
//! user message made only of them is a system message, so that `when` patterns, `{{prompt}}`
//! and `{{history}}` see what was typed.

/// How Claude Code and Qwen Code mark context they add to user messages.
const REMINDER_TAG: &str = "<system-reminder>";

/// Whether a text part of a user message is context the agent added.
pub(crate) fn is_reminder(text: &str) -> bool {
    text.trim_start().starts_with(REMINDER_TAG)
}

/// A user message's text parts sorted into the context the agent added and what was typed,
/// each in order.
pub(crate) fn split<'a>(texts: &[&'a str]) -> (Vec<&'a str>, Vec<&'a str>) {
    texts.iter().partition(|text| is_reminder(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_that_open_with_the_tag_are_context() {
        let texts = [
            "<system-reminder>\nThe date is today.\n</system-reminder>",
            "  \n<system-reminder>skills</system-reminder>",
            "Please create a.txt",
            "Quote <system-reminder> in a prompt",
        ];
        assert_eq!(
            split(&texts),
            (
                vec![texts[0], texts[1]],
                vec!["Please create a.txt", "Quote <system-reminder> in a prompt"]
            )
        );
    }
}

//! Filling in the placeholders of scripted text answers from the request being answered.
//!
//! `{{history}}` exists so that a resumed session is visible in the agent's own output: the
//! answer says how long the history was and which prompts it carried.

use crate::conversation::Conversation;

/// How many characters of each prompt `{{history}}` shows.
const PROMPT_CLIP: usize = 80;

/// Replaces the placeholders in `template`:
///
/// - `{{history}}`: `history: 8 messages, 2 tool results, prompts: [first | second]`, every
///   message of the request counted (system included), each prompt on one line and clipped
///   to 80 characters;
/// - `{{prompt}}`: the latest user prompt, unclipped (empty if there is none);
/// - `{{model}}`: the model name the agent asked for;
/// - `{{tools}}`: the offered tool names, comma-separated.
///
/// Anything else between braces is left as it is.
pub fn fill(template: &str, conversation: &Conversation) -> String {
    let mut out = template.to_owned();
    if out.contains("{{history}}") {
        out = out.replace("{{history}}", &history_line(conversation));
    }
    if out.contains("{{prompt}}") {
        out = out.replace("{{prompt}}", conversation.last_prompt().unwrap_or(""));
    }
    if out.contains("{{model}}") {
        out = out.replace("{{model}}", &conversation.model);
    }
    if out.contains("{{tools}}") {
        out = out.replace("{{tools}}", &conversation.tools.join(","));
    }
    out
}

/// The text `{{history}}` stands for.
pub fn history_line(conversation: &Conversation) -> String {
    let prompts: Vec<String> = conversation
        .prompts()
        .into_iter()
        .map(one_line_clipped)
        .collect();
    let messages = conversation.messages.len();
    let results = conversation.tool_results();
    format!(
        "history: {messages} {}, {results} tool {}, prompts: [{}]",
        if messages == 1 { "message" } else { "messages" },
        if results == 1 { "result" } else { "results" },
        prompts.join(" | ")
    )
}

fn one_line_clipped(prompt: &str) -> String {
    let flat = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(PROMPT_CLIP) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Message, Role};

    fn message(role: Role, text: &str) -> Message {
        Message {
            role,
            text: text.to_owned(),
            tool_calls: Vec::new(),
        }
    }

    fn two_rounds() -> Conversation {
        Conversation {
            model: "scripted".to_owned(),
            stream: true,
            messages: vec![
                message(Role::System, "be brief"),
                message(Role::User, "create\n  hello.txt"),
                message(Role::Assistant, ""),
                message(Role::Tool, "Wrote file successfully."),
                message(Role::Assistant, "Done."),
                message(Role::User, "now edit it"),
            ],
            tools: vec!["write".to_owned(), "edit".to_owned()],
        }
    }

    #[test]
    fn history_counts_messages_results_and_prompts() {
        assert_eq!(
            fill("Done. {{history}}", &two_rounds()),
            "Done. history: 6 messages, 1 tool result, prompts: [create hello.txt | now edit it]"
        );
    }

    #[test]
    fn other_placeholders_and_unknown_ones() {
        assert_eq!(
            fill("{{prompt}}/{{model}}/{{tools}}/{{nope}}", &two_rounds()),
            "now edit it/scripted/write,edit/{{nope}}"
        );
    }

    #[test]
    fn long_prompts_are_clipped_on_a_char_boundary() {
        let mut conversation = two_rounds();
        conversation.messages = vec![message(Role::User, &"é".repeat(100))];
        assert_eq!(
            history_line(&conversation),
            format!(
                "history: 1 message, 0 tool results, prompts: [{}…]",
                "é".repeat(80)
            )
        );
    }
}

//! Recognising user messages that carry context rather than a prompt.
//!
//! Codex sends its environment (`<environment_context>…</environment_context>`), project
//! instructions (`# AGENTS.md instructions for DIR` followed by `<INSTRUCTIONS>…`) and
//! similar blocks as *user* messages. For ganger they are not prompts: they must neither
//! open a round nor show up in `{{history}}`'s prompt list, so the parser files them as
//! system messages.

/// How Codex introduces the project instructions it found (AGENTS.md).
const INSTRUCTIONS_HEADING: &str = "# AGENTS.md instructions for ";

/// Whether every text part of a user message is a context block (and there is at least one).
pub(super) fn is_context_only<'a>(parts: impl IntoIterator<Item = &'a str>) -> bool {
    let mut any = false;
    for part in parts {
        if !is_context_block(part) {
            return false;
        }
        any = true;
    }
    any
}

/// Whether `text` is one block wrapped in a tag (`<name …>…</name …>`, the closing tag at
/// the very end) or the project instructions.
fn is_context_block(text: &str) -> bool {
    let text = text.trim();
    if text.starts_with(INSTRUCTIONS_HEADING) {
        return true;
    }
    let Some(rest) = text.strip_prefix('<') else {
        return false;
    };
    let name_end = rest.find(['>', ' ', '\n']).unwrap_or(rest.len());
    let name = &rest[..name_end];
    let closes_it = text
        .rfind("</")
        .is_some_and(|close| text[close + 2..].starts_with(name));
    !name.is_empty() && !name.starts_with('/') && closes_it && text.ends_with('>')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tagged_blocks_and_instructions_are_context() {
        assert!(is_context_only([
            "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"
        ]));
        assert!(is_context_only([
            "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nbe nice\n</INSTRUCTIONS>",
            "<user_instructions>x</user_instructions>",
        ]));
        assert!(is_context_only([
            "<permissions instructions>\nno\n</permissions instructions>"
        ]));
    }

    #[test]
    fn prompts_are_not_context() {
        assert!(!is_context_only(["create hello.txt"]));
        assert!(!is_context_only(["<b>bold</b> and more"]));
        assert!(!is_context_only(["fix it\n<stdin>\nlog\n</stdin>"]));
        assert!(!is_context_only([
            "<environment_context></environment_context>",
            "and a prompt"
        ]));
        assert!(!is_context_only(Vec::<&str>::new()));
    }
}

//! The streamed answer (`streamGenerateContent?alt=sse`): a few `data:` events, each a whole
//! `GenerateContentResponse` carrying the next piece of text; the last one adds
//! `finishReason` and `usageMetadata`. A function call comes whole in one event, as Gemini
//! sends it. There are no event names and no closing sentinel.

use serde_json::json;

use super::response::{function_call_part, response};
use crate::conversation::Answer;
use crate::protocol::{RenderContext, SseEvent};

/// How many events a text answer is streamed in (fewer for short texts).
const TEXT_PIECES: usize = 4;

/// The events of a streamed answer.
pub(super) fn events(answer: &Answer, context: RenderContext<'_>) -> Vec<SseEvent> {
    let bodies = match answer {
        Answer::Text { text } => {
            let pieces = split_text(text, TEXT_PIECES);
            let last = pieces.len() - 1;
            pieces
                .into_iter()
                .enumerate()
                .map(|(at, piece)| response(vec![json!({"text": piece})], at == last, context))
                .collect()
        }
        Answer::ToolCall { .. } => vec![response(vec![function_call_part(answer)], true, context)],
    };
    bodies
        .into_iter()
        .map(|body| SseEvent::data(body.to_string()))
        .collect()
}

/// Splits `text` into at most `count` non-empty pieces of about equal length, on character
/// boundaries; an empty text is one empty piece.
fn split_text(text: &str, count: usize) -> Vec<&str> {
    let boundaries: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    let size = boundaries.len().div_ceil(count.max(1)).max(1);
    let mut cuts: Vec<usize> = boundaries.iter().copied().step_by(size).collect();
    cuts.push(text.len());
    if cuts.len() == 1 {
        return vec![text];
    }
    cuts.windows(2)
        .map(|pair| &text[pair[0]..pair[1]])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::split_text;

    #[test]
    fn pieces_cover_the_text_on_char_boundaries() {
        assert_eq!(split_text("", 4), vec![""]);
        assert_eq!(split_text("ab", 4), vec!["a", "b"]);
        assert_eq!(
            split_text("héllo wörld", 4),
            vec!["hél", "lo ", "wör", "ld"]
        );
    }
}

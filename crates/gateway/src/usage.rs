//! Tokens read from a model's responses as they pass, whatever the provider's format:
//! OpenAI chat (`usage.prompt_tokens`/`completion_tokens`), OpenAI Responses and Anthropic
//! (`usage.input_tokens`/`output_tokens`, also under `response` or `message`) and Gemini
//! (`usageMetadata.promptTokenCount`/`candidatesTokenCount`).
//!
//! Streams report usage cumulatively (Anthropic's `message_start` then `message_delta`,
//! Gemini's chunks), so each count is the largest one seen. Server-sent events are read a
//! line at a time; any other body is held up to [`MAX_HELD`] and read at its end. Nothing is
//! delayed: the scanner sees copies of frames already on their way.

use serde_json::Value;

/// A request's or a round's tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input + self.output
    }
}

/// The most of a body (or of one event line) held to read its usage.
pub const MAX_HELD: usize = 4 << 20;

#[derive(Debug)]
pub(crate) struct UsageScanner {
    events: bool,
    held: Vec<u8>,
    overflowed: bool,
    seen: Tokens,
}

impl UsageScanner {
    /// A scanner for a body of this `content-type`.
    pub fn new(content_type: Option<&str>) -> UsageScanner {
        UsageScanner {
            events: content_type.is_some_and(|t| t.starts_with("text/event-stream")),
            held: Vec::new(),
            overflowed: false,
            seen: Tokens::default(),
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        if !self.events {
            if self.held.len() + bytes.len() > MAX_HELD {
                self.overflowed = true;
                self.held = Vec::new();
            } else if !self.overflowed {
                self.held.extend_from_slice(bytes);
            }
            return;
        }
        let mut rest = bytes;
        while let Some(at) = memchr_newline(rest) {
            self.push_line_part(&rest[..at]);
            let line = std::mem::take(&mut self.held);
            if !self.overflowed {
                self.read_event_line(&line);
            }
            self.overflowed = false;
            rest = &rest[at + 1..];
        }
        self.push_line_part(rest);
    }

    /// The tokens seen, once the body has ended.
    pub fn finish(mut self) -> Tokens {
        let held = std::mem::take(&mut self.held);
        if !self.overflowed && !held.is_empty() {
            if self.events {
                self.read_event_line(&held);
            } else if let Ok(value) = serde_json::from_slice::<Value>(&held) {
                self.read_value(&value);
            }
        }
        self.seen
    }

    fn push_line_part(&mut self, part: &[u8]) {
        if self.held.len() + part.len() > MAX_HELD {
            self.overflowed = true;
            self.held = Vec::new();
        } else if !self.overflowed {
            self.held.extend_from_slice(part);
        }
    }

    fn read_event_line(&mut self, line: &[u8]) {
        let Some(data) = line.strip_prefix(b"data:") else {
            return;
        };
        if let Ok(value) = serde_json::from_slice::<Value>(data.trim_ascii()) {
            self.read_value(&value);
        }
    }

    fn read_value(&mut self, value: &Value) {
        // A Gemini non-SSE stream is an array of chunks.
        if let Some(items) = value.as_array() {
            for item in items {
                self.read_value(item);
            }
            return;
        }
        for usage in [
            value.get("usage"),
            value.pointer("/response/usage"),
            value.pointer("/message/usage"),
        ]
        .into_iter()
        .flatten()
        {
            self.take(usage, "input_tokens", "output_tokens");
            self.take(usage, "prompt_tokens", "completion_tokens");
        }
        if let Some(usage) = value.get("usageMetadata") {
            self.take(usage, "promptTokenCount", "candidatesTokenCount");
        }
    }

    fn take(&mut self, usage: &Value, input: &str, output: &str) {
        if let Some(n) = usage.get(input).and_then(Value::as_u64) {
            self.seen.input = self.seen.input.max(n);
        }
        if let Some(n) = usage.get(output).and_then(Value::as_u64) {
            self.seen.output = self.seen.output.max(n);
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(content_type: &str, pieces: &[&str]) -> Tokens {
        let mut scanner = UsageScanner::new(Some(content_type));
        for piece in pieces {
            scanner.feed(piece.as_bytes());
        }
        scanner.finish()
    }

    #[test]
    fn every_providers_usage_is_read_however_the_stream_is_cut() {
        let anthropic = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":120,\"output_tokens\":1}}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":37}}\n\n";
        for cut in [1, 7, 50, anthropic.len() - 3] {
            let (a, b) = anthropic.split_at(cut);
            let tokens = scan("text/event-stream", &[a, b]);
            assert_eq!(
                tokens,
                Tokens {
                    input: 120,
                    output: 37
                },
                "cut at {cut}"
            );
        }
        let chat = "data: {\"choices\":[]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\ndata: [DONE]\n\n";
        assert_eq!(
            scan("text/event-stream; charset=utf-8", &[chat]),
            Tokens {
                input: 9,
                output: 4
            }
        );
        let responses = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":55,\"output_tokens\":6}}}\n";
        assert_eq!(
            scan("text/event-stream", &[responses]),
            Tokens {
                input: 55,
                output: 6
            }
        );
        let gemini = "data: {\"usageMetadata\":{\"promptTokenCount\":70,\"candidatesTokenCount\":2}}\r\n\r\ndata: {\"usageMetadata\":{\"promptTokenCount\":70,\"candidatesTokenCount\":11}}\r\n\r\n";
        assert_eq!(
            scan("text/event-stream", &[gemini]),
            Tokens {
                input: 70,
                output: 11
            }
        );
        let whole = "{\n  \"usage\": {\"prompt_tokens\": 3,\n \"completion_tokens\": 2}\n}";
        assert_eq!(
            scan("application/json", &[&whole[..10], &whole[10..]]),
            Tokens {
                input: 3,
                output: 2
            }
        );
        assert_eq!(scan("application/json", &["not json"]), Tokens::default());
    }

    #[test]
    fn a_body_too_big_to_hold_is_let_through_uncounted_and_nothing_more_is_held() {
        let mut scanner = UsageScanner::new(Some("application/json"));
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..6 {
            scanner.feed(&chunk);
        }
        assert!(scanner.held.is_empty());
        scanner.feed(b"{\"usage\":{\"input_tokens\":5}}");
        assert_eq!(scanner.finish(), Tokens::default());
    }
}

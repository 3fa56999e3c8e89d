//! The round summary: everything a report needs, folded line by line from the normalized
//! events, so that a round in progress and a finished one are summarized by the same code.

use crate::event::{Event, ToolStatus, Usage, UsageMode};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many error and rejection messages a summary keeps; later ones are only counted.
pub const KEPT_MESSAGES: usize = 32;

/// The most characters of a `DONE:` line a summary keeps.
pub const DONE_LIMIT: usize = 500;

/// The `DONE:` line of an answer: its last non-empty line, when that starts with `DONE:`
/// (after leading blanks), trimmed and clipped to [`DONE_LIMIT`] characters.
pub fn done_line(answer: &str) -> Option<String> {
    let last = answer
        .lines()
        .map(str::trim)
        .rfind(|line| !line.is_empty())?;
    if !last.starts_with("DONE:") {
        return None;
    }
    Some(match last.char_indices().nth(DONE_LIMIT) {
        Some((at, _)) => last[..at].to_owned(),
        None => last.to_owned(),
    })
}

/// Replaces `text` with what `rewrite` makes of it, if anything; says whether it did.
fn rewrite_in_place(rewrite: &mut impl FnMut(&str) -> Option<String>, text: &mut String) -> bool {
    match rewrite(text) {
        Some(new) => {
            *text = new;
            true
        }
        None => false,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Token totals of a round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub reasoning: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

/// What one round's stream says, folded from its lines. Missing fields read as their
/// defaults, so that summaries stored by an older ganger still load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RoundSummary {
    /// The agent's session id, from the first line that carried one.
    pub session: Option<String>,
    /// Non-empty lines read.
    pub lines: u64,
    /// Lines by the agent's own event type (`step_start`, `tool_use`, ...).
    pub counts: BTreeMap<String, u64>,
    /// Lines that were not a JSON object with a string `type`: counted and kept in the raw
    /// file, never fatal.
    pub malformed: u64,
    /// Well-formed lines of a type the adapter does not know.
    pub unknown: u64,
    /// Lines too long to read (over the stream's line cap): counted, kept in the raw file,
    /// neither events nor malformed.
    #[serde(skip_serializing_if = "is_zero")]
    pub long_lines: u64,
    /// Errors the agent reported, in order (the first [`KEPT_MESSAGES`]).
    pub errors: Vec<String>,
    /// How many errors the agent reported in all.
    pub error_count: u64,
    /// Tool calls refused by the agent's permission settings without asking (the first
    /// [`KEPT_MESSAGES`]).
    pub rejections: Vec<String>,
    /// How many tool calls were refused in all.
    pub rejection_count: u64,
    /// Tool calls that ended.
    pub tool_calls: u64,
    /// Tool calls that ended in an ordinary tool error.
    pub tool_errors: u64,
    /// Retry notices (not progress).
    pub retries: u64,
    /// The last retry notice's message: the cause a round that only retried until it was
    /// stopped can give (Codex's `Reconnecting...` lines).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_retry: Option<String>,
    /// Model steps started and finished.
    pub steps_started: u64,
    pub steps_finished: u64,
    /// The finish reason of the last step, or `None` when the last step never finished.
    pub finish: Option<String>,
    /// The assistant's last text.
    pub answer: Option<String>,
    /// The answer's last non-empty line when it starts with `DONE:` (the reply convention a
    /// brief may ask for: `DONE:<one-line result>`), trimmed and clipped to [`DONE_LIMIT`]
    /// characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// Tokens used by the round.
    pub tokens: Tokens,
    /// Cost in US dollars, when the agent reports one.
    pub cost_usd: Option<f64>,
    /// The session's running totals as the agent last reported them, for agents whose usage
    /// covers the whole session ([`UsageMode::SessionTotal`]); `tokens` is then this minus the
    /// previous round's totals, worked out when the round is recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_tokens: Option<Tokens>,
    /// The agent printed its last event of the round ([`Event::Ended`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
    /// What the model gateway saw of the round, when the round ran behind it: a count of the
    /// agent's requests independent of what the agent reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewayTally>,
}

/// A round's requests through the model gateway (`docs/gateway.md`).
///
/// ```
/// let mut before = ganger_events::GatewayTally::default();
/// before.requests = 2;
/// let mut after = before.clone();
/// after.requests = 5;
/// assert_eq!(after.since(&before).requests, 3);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct GatewayTally {
    /// Model requests forwarded upstream.
    pub requests: u64,
    /// Tokens the upstream's responses reported (input and output).
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// Tunnels (`CONNECT`) opened to allowed hosts.
    pub tunnels: u64,
    /// What the gateway refused (`host:port` and why), the first [`KEPT_MESSAGES`].
    pub refused: Vec<String>,
    /// How many requests it refused in all.
    pub refused_count: u64,
    /// Answers of 429 (rate limited) from the upstream.
    #[serde(skip_serializing_if = "is_zero")]
    pub rate_limited: u64,
    /// The longest wait those answers asked for, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
}

impl GatewayTally {
    /// What was counted after `earlier`, a tally of the same gateway taken before (a warm
    /// turn's share of its warm host's gateway). The longest wait is the whole tally's.
    pub fn since(&self, earlier: &GatewayTally) -> GatewayTally {
        GatewayTally {
            requests: self.requests.saturating_sub(earlier.requests),
            input_tokens: self.input_tokens.saturating_sub(earlier.input_tokens),
            output_tokens: self.output_tokens.saturating_sub(earlier.output_tokens),
            bytes_up: self.bytes_up.saturating_sub(earlier.bytes_up),
            bytes_down: self.bytes_down.saturating_sub(earlier.bytes_down),
            tunnels: self.tunnels.saturating_sub(earlier.tunnels),
            refused: self
                .refused
                .iter()
                .skip(earlier.refused.len())
                .cloned()
                .collect(),
            refused_count: self.refused_count.saturating_sub(earlier.refused_count),
            rate_limited: self.rate_limited.saturating_sub(earlier.rate_limited),
            retry_after_ms: self.retry_after_ms,
        }
    }
}

impl RoundSummary {
    /// Counts one well-formed line of the agent's event type `kind`.
    pub fn record_line(&mut self, kind: &str) {
        self.lines += 1;
        if let Some(count) = self.counts.get_mut(kind) {
            *count += 1;
        } else {
            self.counts.insert(kind.to_owned(), 1);
        }
    }

    /// Counts a line that is not a well-formed event.
    pub fn record_malformed(&mut self) {
        self.lines += 1;
        self.malformed += 1;
    }

    /// Rewrites every text of the summary that came from the agent's stream (ids, event types,
    /// messages, the answer) with `rewrite`, which returns the new text or `None` to keep it.
    /// ganger's redactor goes through here, so a field added to the summary is added here too.
    /// The `DONE:` line is taken again from the rewritten answer, so that its clipping never
    /// cuts what the rewrite put in.
    pub fn rewrite_texts(&mut self, mut rewrite: impl FnMut(&str) -> Option<String>) {
        for text in self
            .session
            .iter_mut()
            .chain(&mut self.errors)
            .chain(&mut self.rejections)
            .chain(&mut self.last_retry)
            .chain(&mut self.finish)
        {
            rewrite_in_place(&mut rewrite, text);
        }
        if let Some(answer) = &mut self.answer
            && rewrite_in_place(&mut rewrite, answer)
        {
            self.done = done_line(answer);
        }
        if let Some(done) = &mut self.done {
            rewrite_in_place(&mut rewrite, done);
        }
        let counts = std::mem::take(&mut self.counts);
        for (mut kind, count) in counts {
            rewrite_in_place(&mut rewrite, &mut kind);
            *self.counts.entry(kind).or_insert(0) += count;
        }
    }

    /// Counts a line that was too long to read.
    pub fn record_long_line(&mut self) {
        self.lines += 1;
        self.long_lines += 1;
    }

    /// Folds one normalized event into the summary.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::Session { id } => {
                if self.session.is_none() {
                    self.session = Some(id.clone());
                }
            }
            Event::StepStarted => {
                self.steps_started += 1;
                // A step that starts after the last finish leaves the round unfinished until
                // it finishes too.
                self.finish = None;
            }
            Event::StepFinished { reason, usage } => {
                self.steps_finished += 1;
                self.finish = Some(reason.clone().unwrap_or_default());
                self.add_usage(usage);
            }
            Event::Usage { usage } => self.add_usage(usage),
            Event::Text { text } => {
                if !text.is_empty() {
                    self.answer = Some(text.clone());
                    self.done = done_line(text);
                }
            }
            Event::Tool { status, .. } => {
                self.tool_calls += 1;
                if *status == ToolStatus::Error {
                    self.tool_errors += 1;
                }
            }
            Event::PermissionRejected { tool, message } => {
                self.rejection_count += 1;
                if self.rejections.len() < KEPT_MESSAGES {
                    self.rejections.push(format!("{tool}: {message}"));
                }
            }
            Event::Error {
                name,
                message,
                status_code,
                ..
            } => {
                self.error_count += 1;
                if self.errors.len() < KEPT_MESSAGES {
                    let mut text = name.clone();
                    if let Some(code) = status_code {
                        text.push_str(&format!(" (HTTP {code})"));
                    }
                    if !message.is_empty() {
                        if !text.is_empty() {
                            text.push_str(": ");
                        }
                        text.push_str(message);
                    }
                    self.errors.push(text);
                }
            }
            Event::Retry { message } => {
                self.retries += 1;
                self.last_retry = Some(message.clone());
            }
            Event::ToolStarted { .. } | Event::PermissionGranted { .. } => {}
            Event::Ended => self.ended = true,
            Event::Gateway { tally } => self.gateway = Some(tally.clone()),
            Event::Unknown { .. } => self.unknown += 1,
        }
    }

    fn add_usage(&mut self, usage: &Usage) {
        let tokens = Tokens {
            input: usage.input,
            output: usage.output,
            reasoning: usage.reasoning,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
        };
        match usage.mode {
            UsageMode::Delta => {
                self.tokens.input += tokens.input;
                self.tokens.output += tokens.output;
                self.tokens.reasoning += tokens.reasoning;
                self.tokens.cache_read += tokens.cache_read;
                self.tokens.cache_write += tokens.cache_write;
                if let Some(cost) = usage.cost_usd {
                    *self.cost_usd.get_or_insert(0.0) += cost;
                }
            }
            UsageMode::RoundTotal => {
                self.tokens = tokens;
                if usage.cost_usd.is_some() {
                    self.cost_usd = usage.cost_usd;
                }
            }
            UsageMode::SessionTotal => {
                self.tokens = tokens;
                self.session_tokens = Some(tokens);
                if usage.cost_usd.is_some() {
                    self.cost_usd = usage.cost_usd;
                }
            }
        }
    }

    /// Turns session totals into this round's own figures, given the session totals at the end
    /// of the previous round in the same session (none: this round opened the session). A
    /// figure that went down (a session the agent compacted or restarted) is taken as is.
    pub fn settle_session_tokens(&mut self, previous: Option<Tokens>) {
        let (Some(now), Some(before)) = (self.session_tokens, previous) else {
            return;
        };
        let less = |now: u64, before: u64| if now >= before { now - before } else { now };
        self.tokens = Tokens {
            input: less(now.input, before.input),
            output: less(now.output, before.output),
            reasoning: less(now.reasoning, before.reasoning),
            cache_read: less(now.cache_read, before.cache_read),
            cache_write: less(now.cache_write, before.cache_write),
        };
    }

    /// Tokens that count against a budget: input, output and reasoning (cached reads and
    /// writes are in the cost, not here: a long session rereads its cache on every call).
    pub fn budget_tokens(&self) -> u64 {
        self.tokens.input + self.tokens.output + self.tokens.reasoning
    }

    /// Whether the stream showed the agent finishing its last step.
    pub fn finished_last_step(&self) -> bool {
        self.finish.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(reason: &str, input: u64, cost: Option<f64>) -> Event {
        Event::StepFinished {
            reason: Some(reason.to_owned()),
            usage: Usage {
                input,
                output: 1,
                cost_usd: cost,
                ..Usage::default()
            },
        }
    }

    #[test]
    fn the_done_line_is_the_answers_last_non_empty_line_when_it_starts_with_done() {
        assert_eq!(
            done_line("I fixed it.\n\nDONE: 3 tests pass\n\n"),
            Some("DONE: 3 tests pass".to_owned())
        );
        assert_eq!(done_line("  DONE:ok  "), Some("DONE:ok".to_owned()));
        assert_eq!(done_line("DONE: early\nthen more"), None);
        assert_eq!(done_line("done: lower case"), None);
        assert_eq!(done_line(""), None);
        let long = format!("DONE: {}", "x".repeat(DONE_LIMIT * 2));
        assert_eq!(done_line(&long).unwrap().chars().count(), DONE_LIMIT);
        let mut summary = RoundSummary::default();
        summary.apply(&Event::Text {
            text: "work\nDONE: first".into(),
        });
        assert_eq!(summary.done.as_deref(), Some("DONE: first"));
        // A later answer without the line clears it: the convention is about the last answer.
        summary.apply(&Event::Text {
            text: "more work".into(),
        });
        assert_eq!(summary.done, None);
    }

    #[test]
    fn session_totals_become_the_rounds_own_figures_by_difference() {
        let mut summary = RoundSummary::default();
        let total = |input, output| Event::StepFinished {
            reason: None,
            usage: Usage {
                input,
                output,
                mode: UsageMode::SessionTotal,
                ..Usage::default()
            },
        };
        summary.apply(&total(2100, 50));
        summary.apply(&total(4280, 120));
        assert_eq!(summary.tokens.input, 4280);
        let before = Tokens {
            input: 2100,
            output: 50,
            ..Tokens::default()
        };
        summary.settle_session_tokens(Some(before));
        assert_eq!((summary.tokens.input, summary.tokens.output), (2180, 70));
        assert_eq!(summary.session_tokens.unwrap().input, 4280);
        let mut first = RoundSummary::default();
        first.apply(&total(2100, 50));
        first.settle_session_tokens(None);
        assert_eq!(first.tokens.input, 2100);
    }

    #[test]
    fn a_step_started_after_the_last_finish_leaves_the_round_unfinished() {
        let mut summary = RoundSummary::default();
        summary.apply(&Event::StepStarted);
        summary.apply(&step("tool-calls", 10, Some(0.5)));
        assert_eq!(summary.finish.as_deref(), Some("tool-calls"));
        summary.apply(&Event::StepStarted);
        assert_eq!(summary.finish, None);
        assert!(!summary.finished_last_step());
        summary.apply(&step("stop", 5, Some(0.25)));
        assert_eq!(summary.finish.as_deref(), Some("stop"));
        assert_eq!(summary.tokens.input, 15);
        assert_eq!(summary.cost_usd, Some(0.75));
        assert_eq!((summary.steps_started, summary.steps_finished), (2, 2));
    }

    #[test]
    fn retries_are_counted_and_the_last_message_kept() {
        let mut summary = RoundSummary::default();
        for n in 1..=3 {
            summary.apply(&Event::Retry {
                message: format!("Reconnecting... {n}/3"),
            });
        }
        assert_eq!(summary.retries, 3);
        assert_eq!(summary.last_retry.as_deref(), Some("Reconnecting... 3/3"));
    }

    #[test]
    fn round_totals_replace_and_deltas_add() {
        let mut summary = RoundSummary::default();
        let total = |input| Event::StepFinished {
            reason: None,
            usage: Usage {
                input,
                mode: UsageMode::RoundTotal,
                ..Usage::default()
            },
        };
        summary.apply(&total(100));
        summary.apply(&total(250));
        assert_eq!(summary.tokens.input, 250);
        assert_eq!(summary.cost_usd, None);
    }

    #[test]
    fn messages_beyond_the_kept_number_are_counted_only() {
        let mut summary = RoundSummary::default();
        for n in 0..(KEPT_MESSAGES + 5) {
            summary.apply(&Event::Error {
                name: "APIError".into(),
                message: format!("boom {n}"),
                status_code: Some(500),
                retryable: Some(true),
            });
        }
        assert_eq!(summary.errors.len(), KEPT_MESSAGES);
        assert_eq!(summary.error_count, (KEPT_MESSAGES + 5) as u64);
        assert_eq!(summary.errors[0], "APIError (HTTP 500): boom 0");
    }

    #[test]
    fn the_first_session_id_wins_and_empty_text_keeps_the_last_answer() {
        let mut summary = RoundSummary::default();
        summary.apply(&Event::Session { id: "a".into() });
        summary.apply(&Event::Session { id: "b".into() });
        summary.apply(&Event::Text {
            text: "first".into(),
        });
        summary.apply(&Event::Text {
            text: String::new(),
        });
        assert_eq!(summary.session.as_deref(), Some("a"));
        assert_eq!(summary.answer.as_deref(), Some("first"));
    }
}

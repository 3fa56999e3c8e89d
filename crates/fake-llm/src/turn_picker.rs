//! The script engine: which turn answers a request.
//!
//! The picker keeps one cursor (the next turn) for the whole server. Requests are sorted
//! first: a request that offers no tools is a side request (session title, summary) and gets
//! the default answer without touching the cursor; a request whose last message is a user
//! prompt *opens a prompt*; any other request (the last message is a tool result) *continues*.
//!
//! - An opening request takes the first turn at or after the cursor whose `when` matches its
//!   prompt (the cursor jumps there; turns jumped over are skipped for good). When none
//!   matches, it takes the turn at the cursor if that turn has no `when`.
//! - A continuing request takes the turn at the cursor if that turn has no `when`: a turn with
//!   a pattern waits for a new prompt.
//! - A text or tool turn is used once: the cursor moves past it. A fault turn answers
//!   `times` requests and then the cursor moves on; without `times` it answers every request
//!   from then on. Once it has faulted, it answers the following requests whatever their kind
//!   (a retry repeats the faulted request), unless a new prompt matches a later `when`.
//! - When a turn waits for a prompt that has not come, or when the cursor is past the last
//!   turn, the request gets an explanatory text and the cursor stays. With `repeat`, the
//!   cursor goes back to the first turn instead of running out.
//! - A server-wide fault answers every request that offers tools, before any turn.

use serde::{Deserialize, Serialize};

use crate::conversation::Conversation;
use crate::fault::FaultSpec;
use crate::script::TurnKind;
use crate::script_check::CheckedScript;

/// What answered a request, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum AnsweredBy {
    /// The scripted turn with this index.
    Turn {
        /// Its index in the script (0-based).
        index: usize,
    },
    /// The default answer, because the request offered no tools.
    Default,
    /// The server-wide fault.
    ServerFault,
    /// An explanatory text: every turn is used.
    ScriptExhausted,
    /// An explanatory text: the turn at the cursor waits for a prompt matching its pattern.
    WaitingForPrompt {
        /// The waiting turn's index.
        index: usize,
    },
    /// Not a model request: the inspection or model list endpoints, or an unknown path.
    NotAModelRequest,
    /// A model request whose body could not be read; answered with HTTP 400.
    BadRequest,
}

/// What the picked turn asks the server to do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Answer this text template.
    Text(String),
    /// Call this tool.
    Tool {
        name: String,
        arguments: serde_json::Value,
    },
    /// Fail this way.
    Fault(FaultSpec),
}

/// The picker's verdict for one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pick {
    pub(crate) by: AnsweredBy,
    pub(crate) action: Action,
}

/// The script and where it stands.
#[derive(Debug)]
pub(crate) struct TurnPicker {
    checked: CheckedScript,
    /// The next turn to use.
    cursor: usize,
    /// How many requests the fault turn at the cursor has answered so far.
    faults_sent: u32,
}

impl TurnPicker {
    pub(crate) fn new(checked: CheckedScript) -> Self {
        TurnPicker {
            checked,
            cursor: 0,
            faults_sent: 0,
        }
    }

    /// Picks the answer to `conversation` and moves the cursor.
    pub(crate) fn pick(&mut self, conversation: &Conversation) -> Pick {
        let script = &self.checked.script;
        if !conversation.offers_tools() {
            return Pick {
                by: AnsweredBy::Default,
                action: Action::Text(script.default_answer.clone()),
            };
        }
        if let Some(spec) = script.fault_every_request {
            return Pick {
                by: AnsweredBy::ServerFault,
                action: Action::Fault(spec),
            };
        }
        let count = script.turns.len();
        if self.cursor >= count && script.repeat {
            self.move_to(0);
        }
        if self.cursor >= count {
            return Pick {
                by: AnsweredBy::ScriptExhausted,
                action: Action::Text(format!(
                    "fake-llm: the script is exhausted: all {count} turns are used, so there \
                     is no scripted answer for this request."
                )),
            };
        }
        let matched = conversation.new_prompt().and_then(|prompt| {
            (self.cursor..count).find(|&index| {
                self.checked.patterns[index]
                    .as_ref()
                    .is_some_and(|pattern| pattern.is_match(prompt))
            })
        });
        let fault_in_progress = self.faults_sent > 0;
        match matched {
            Some(index) => self.take(index),
            None if fault_in_progress || self.checked.patterns[self.cursor].is_none() => {
                self.take(self.cursor)
            }
            None => self.waiting(conversation),
        }
    }

    fn move_to(&mut self, index: usize) {
        if index != self.cursor {
            self.cursor = index;
            self.faults_sent = 0;
        }
    }

    fn take(&mut self, index: usize) -> Pick {
        self.move_to(index);
        let turn = self.checked.script.turns[index].clone();
        let action = match turn.kind {
            TurnKind::Text { text } => {
                self.move_to(index + 1);
                Action::Text(text)
            }
            TurnKind::Tool { name, arguments } => {
                self.move_to(index + 1);
                Action::Tool { name, arguments }
            }
            TurnKind::Fault { fault } => {
                let spec = FaultSpec {
                    fault,
                    retry_after_ms: turn.retry_after_ms,
                };
                self.faults_sent = self.faults_sent.saturating_add(1);
                if turn.times.is_some_and(|times| self.faults_sent >= times) {
                    self.move_to(index + 1);
                }
                Action::Fault(spec)
            }
        };
        Pick {
            by: AnsweredBy::Turn { index },
            action,
        }
    }

    fn waiting(&self, conversation: &Conversation) -> Pick {
        let index = self.cursor;
        let pattern = self.checked.script.turns[index]
            .when
            .as_deref()
            .unwrap_or_default();
        let prompt = conversation.last_prompt().unwrap_or_default();
        Pick {
            by: AnsweredBy::WaitingForPrompt { index },
            action: Action::Text(format!(
                "fake-llm: no scripted turn for this request: the next turn (turns[{index}]) \
                 waits for a prompt matching {pattern:?}, and the prompt was {prompt:?}."
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{Message, Role};
    use crate::fault::Fault;
    use crate::script::{Script, Turn};
    use crate::script_check::compile;

    fn picker(script: Script) -> TurnPicker {
        TurnPicker::new(compile(script).unwrap())
    }

    fn request(last: Role, prompt: &str) -> Conversation {
        let message = |role, text: &str| Message {
            role,
            text: text.to_owned(),
            tool_calls: Vec::new(),
        };
        let mut messages = vec![message(Role::User, prompt)];
        if last == Role::Tool {
            messages.push(message(Role::Assistant, ""));
            messages.push(message(Role::Tool, "ok"));
        }
        Conversation {
            model: "m".to_owned(),
            stream: false,
            messages,
            tools: vec!["write".to_owned()],
        }
    }

    fn prompt(text: &str) -> Conversation {
        request(Role::User, text)
    }

    fn tool_result() -> Conversation {
        request(Role::Tool, "earlier prompt")
    }

    /// Picks for each request and returns what answered.
    fn run(picker: &mut TurnPicker, requests: &[Conversation]) -> Vec<AnsweredBy> {
        requests
            .iter()
            .map(|request| picker.pick(request).by)
            .collect()
    }

    fn turn(index: usize) -> AnsweredBy {
        AnsweredBy::Turn { index }
    }

    #[test]
    fn turns_without_patterns_go_in_order_for_any_request() {
        let mut picker = picker(Script::new().text("a").text("b").text("c"));
        assert_eq!(
            run(
                &mut picker,
                &[prompt("x"), tool_result(), prompt("y"), prompt("z")]
            ),
            vec![turn(0), turn(1), turn(2), AnsweredBy::ScriptExhausted]
        );
    }

    #[test]
    fn a_matching_prompt_jumps_forward_and_skipped_turns_are_gone() {
        let mut picker = picker(
            Script::new()
                .text("a")
                .text("b")
                .turn(Turn::text("c").when("go"))
                .text("d"),
        );
        assert_eq!(
            run(
                &mut picker,
                &[prompt("please go"), tool_result(), prompt("again")]
            ),
            vec![turn(2), turn(3), AnsweredBy::ScriptExhausted]
        );
    }

    #[test]
    fn a_turn_with_a_pattern_waits_for_a_matching_new_prompt() {
        let mut picker = picker(Script::new().text("a").turn(Turn::text("b").when("^edit")));
        assert_eq!(
            run(
                &mut picker,
                &[
                    prompt("create"),
                    tool_result(),
                    prompt("re-edit"),
                    prompt("edit now")
                ]
            ),
            vec![
                turn(0),
                AnsweredBy::WaitingForPrompt { index: 1 },
                AnsweredBy::WaitingForPrompt { index: 1 },
                turn(1),
            ]
        );
    }

    #[test]
    fn requests_without_tools_get_the_default_and_move_nothing() {
        let mut picker = picker(Script::new().default_answer("title").text("a"));
        let mut side = prompt("x");
        side.tools.clear();
        assert_eq!(
            picker.pick(&side),
            Pick {
                by: AnsweredBy::Default,
                action: Action::Text("title".to_owned())
            }
        );
        assert_eq!(
            run(&mut picker, &[side, prompt("x")]),
            vec![AnsweredBy::Default, turn(0)]
        );
    }

    #[test]
    fn a_fault_with_times_answers_that_many_requests_of_any_kind() {
        let mut picker = picker(
            Script::new()
                .turn(Turn::fault(Fault::Http500).times(3).when("go"))
                .text("after"),
        );
        assert_eq!(
            run(
                &mut picker,
                &[prompt("go"), prompt("go"), tool_result(), prompt("go")]
            ),
            vec![turn(0), turn(0), turn(0), turn(1)]
        );
    }

    #[test]
    fn jumping_away_from_a_fault_resets_its_count() {
        let mut picker = picker(
            Script::new()
                .fault_times(Fault::Cut, 2)
                .turn(Turn::fault(Fault::Garbage).times(2).when("jump"))
                .text("end"),
        );
        assert_eq!(
            run(
                &mut picker,
                &[prompt("x"), prompt("jump"), prompt("jump"), prompt("y")]
            ),
            vec![turn(0), turn(1), turn(1), turn(2)]
        );
    }

    #[test]
    fn a_permanent_fault_never_lets_go() {
        let mut picker = picker(Script::new().text("a").fault(Fault::Hang));
        assert_eq!(
            run(
                &mut picker,
                &[prompt("x"), prompt("y"), tool_result(), prompt("z")]
            ),
            vec![turn(0), turn(1), turn(1), turn(1)]
        );
    }

    #[test]
    fn repeat_starts_over_and_an_empty_script_is_exhausted_even_with_repeat() {
        let mut picker = picker(Script::new().text("a").text("b").repeat(true));
        assert_eq!(
            run(&mut picker, &[prompt("1"), prompt("2"), prompt("3")]),
            vec![turn(0), turn(1), turn(0)]
        );
        let mut empty = TurnPicker::new(compile(Script::new().repeat(true)).unwrap());
        assert_eq!(
            run(&mut empty, &[prompt("1")]),
            vec![AnsweredBy::ScriptExhausted]
        );
    }

    #[test]
    fn a_server_wide_fault_comes_before_every_turn() {
        let spec = FaultSpec::new(Fault::Http429);
        let mut picker = picker(Script::new().text("a").fault_every_request(spec));
        assert_eq!(
            picker.pick(&prompt("x")),
            Pick {
                by: AnsweredBy::ServerFault,
                action: Action::Fault(spec)
            }
        );
    }
}

//! The rules a script must follow, checked once before a server uses it, and the compiled
//! form (patterns as regexes) the turn picker works with.

use regex::Regex;

use crate::error::ScriptError;
use crate::fault::{Fault, FaultSpec};
use crate::script::{Script, Turn, TurnKind};

/// A script that passed [`Script::check`], with its patterns compiled.
#[derive(Debug, Clone)]
pub(crate) struct CheckedScript {
    pub(crate) script: Script,
    /// `patterns[i]` is the compiled `when` of `script.turns[i]`.
    pub(crate) patterns: Vec<Option<Regex>>,
}

impl Script {
    /// Checks the script's rules: patterns compile, tool calls have a name and object
    /// or string arguments, `times` and `retry_after_ms` only on faults (`retry_after_ms` only on 429
    /// and 500, `times` at least 1), and a permanent fault (no `times`) only as the last turn.
    pub fn check(&self) -> Result<(), ScriptError> {
        compile(self.clone()).map(|_| ())
    }
}

/// Checks `script` and compiles its patterns.
pub(crate) fn compile(script: Script) -> Result<CheckedScript, ScriptError> {
    if let Some(spec) = &script.fault_every_request {
        check_retry_headers(spec).map_err(|reason| ScriptError::Invalid { reason })?;
    }
    let last = script.turns.len().saturating_sub(1);
    let mut patterns = Vec::with_capacity(script.turns.len());
    for (index, turn) in script.turns.iter().enumerate() {
        check_turn(turn, index == last)
            .map_err(|reason| ScriptError::InvalidTurn { index, reason })?;
        let pattern = match &turn.when {
            Some(pattern) => Some(Regex::new(pattern).map_err(|source| ScriptError::Pattern {
                index,
                source: Box::new(source),
            })?),
            None => None,
        };
        patterns.push(pattern);
    }
    Ok(CheckedScript { script, patterns })
}

fn check_turn(turn: &Turn, is_last: bool) -> Result<(), String> {
    match &turn.kind {
        TurnKind::Text { .. } => check_no_fault_options(turn),
        TurnKind::Tool { name, arguments } => {
            if name.is_empty() {
                return Err("a tool call needs a tool name".to_owned());
            }
            if !arguments.is_object() && !arguments.is_string() {
                return Err(format!(
                    "the arguments of tool {name:?} must be a table (a JSON object) or a \
                     string (the raw input of a custom tool)"
                ));
            }
            check_no_fault_options(turn)
        }
        TurnKind::Fault { fault } => {
            if turn.times == Some(0) {
                return Err("`times` must be at least 1".to_owned());
            }
            if turn.times.is_none() && !is_last {
                return Err(format!(
                    "fault {fault} has no `times`, so it never ends and the turns after it \
                     could never be used; give it `times` or make it the last turn"
                ));
            }
            check_retry_headers(&FaultSpec {
                fault: *fault,
                retry_after_ms: turn.retry_after_ms,
            })
        }
    }
}

fn check_no_fault_options(turn: &Turn) -> Result<(), String> {
    if turn.times.is_some() {
        return Err("`times` is only for fault turns".to_owned());
    }
    if turn.retry_after_ms.is_some() {
        return Err("`retry_after_ms` is only for fault turns".to_owned());
    }
    Ok(())
}

fn check_retry_headers(spec: &FaultSpec) -> Result<(), String> {
    match (spec.fault, spec.retry_after_ms) {
        (_, None) | (Fault::Http429 | Fault::Http500, Some(_)) => Ok(()),
        (fault, Some(_)) => Err(format!(
            "`retry_after_ms` only applies to http-429 and http-500, not {fault}"
        )),
    }
}

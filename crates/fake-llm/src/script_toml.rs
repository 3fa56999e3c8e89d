//! Reading a script from TOML (the format `docs/fake-llm.md` documents).
//!
//! The file is read into raw serde types that mirror the TOML one to one, then turned into a
//! [`Script`] with errors that name the turn, then checked.

use std::path::Path;

use serde::Deserialize;

use crate::error::ScriptError;
use crate::fault::{Fault, FaultSpec};
use crate::script::{DEFAULT_ANSWER, Script, Turn, TurnKind};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    default: Option<String>,
    #[serde(default)]
    repeat: bool,
    fault: Option<String>,
    retry_after_ms: Option<u64>,
    #[serde(default)]
    turns: Vec<RawTurn>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTurn {
    when: Option<String>,
    text: Option<String>,
    tool: Option<String>,
    arguments: Option<serde_json::Value>,
    fault: Option<String>,
    times: Option<u32>,
    retry_after_ms: Option<u64>,
}

impl Script {
    /// Parses and checks a TOML script.
    pub fn from_toml_str(text: &str) -> Result<Script, ScriptError> {
        parse(text, "<string>")
    }

    /// Reads, parses and checks a TOML script file.
    pub fn from_path(path: &Path) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_owned(),
            source,
        })?;
        parse(&text, &path.display().to_string())
    }
}

fn parse(text: &str, origin: &str) -> Result<Script, ScriptError> {
    let raw: RawScript = toml::from_str(text).map_err(|source| ScriptError::Parse {
        origin: origin.to_owned(),
        source: Box::new(source),
    })?;
    let fault_every_request = match (raw.fault, raw.retry_after_ms) {
        (Some(name), retry_after_ms) => Some(FaultSpec {
            fault: parse_fault(&name).map_err(|reason| ScriptError::Invalid { reason })?,
            retry_after_ms,
        }),
        (None, Some(_)) => {
            return Err(ScriptError::Invalid {
                reason: "top-level `retry_after_ms` needs a top-level `fault`".to_owned(),
            });
        }
        (None, None) => None,
    };
    let turns = raw
        .turns
        .into_iter()
        .enumerate()
        .map(|(index, raw)| {
            into_turn(raw).map_err(|reason| ScriptError::InvalidTurn { index, reason })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let script = Script {
        default_answer: raw.default.unwrap_or_else(|| DEFAULT_ANSWER.to_owned()),
        turns,
        repeat: raw.repeat,
        fault_every_request,
    };
    script.check()?;
    Ok(script)
}

fn into_turn(raw: RawTurn) -> Result<Turn, String> {
    let kind = match (raw.text, raw.tool, raw.fault) {
        (Some(text), None, None) => {
            if raw.arguments.is_some() {
                return Err("`arguments` is only for tool turns".to_owned());
            }
            TurnKind::Text { text }
        }
        (None, Some(name), None) => TurnKind::Tool {
            name,
            arguments: raw
                .arguments
                .unwrap_or_else(|| serde_json::Value::Object(serde_json::Map::new())),
        },
        (None, None, Some(fault)) => {
            if raw.arguments.is_some() {
                return Err("`arguments` is only for tool turns".to_owned());
            }
            TurnKind::Fault {
                fault: parse_fault(&fault)?,
            }
        }
        _ => return Err("a turn needs exactly one of `text`, `tool` and `fault`".to_owned()),
    };
    Ok(Turn {
        when: raw.when,
        kind,
        times: raw.times,
        retry_after_ms: raw.retry_after_ms,
    })
}

fn parse_fault(name: &str) -> Result<Fault, String> {
    name.parse::<Fault>().map_err(|error| error.to_string())
}

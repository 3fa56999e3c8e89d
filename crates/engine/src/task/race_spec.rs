//! The attempts of a race, as `--attempts` gives them: `AGENT[:MODEL][*COUNT]`, comma
//! separated (`first:provider/model-a*2,second,third:gpt-x`). A pure parse: every bad
//! input is one line naming the entry; whether an agent is installed is asked later. On the
//! task floor, since both `ganger race` and a fleet file's `attempts = "SPEC"` read it.

use crate::base::error::{EngineError, Result};

/// The most attempts a race runs (all of them at once).
pub const MAX_ATTEMPTS: u32 = 16;

/// One attempt: its agent, and its model (`None`: the agent's default, as `start` takes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptSpec {
    pub agent: String,
    pub model: Option<String>,
}

/// The attempts `spec` names, in order (an entry with `*N` gives N attempts in a row).
pub fn parse(spec: &str) -> Result<Vec<AttemptSpec>> {
    let bad = |why: String| {
        EngineError::invalid(format!("--attempts {spec:?}: {why}"))
            .hint("give AGENT[:MODEL][*COUNT], comma separated: `AGENT:PROVIDER/MODEL*2,AGENT`")
    };
    if spec.trim().is_empty() {
        return Err(bad("no attempts given".into()));
    }
    let mut attempts = Vec::new();
    for (index, entry) in spec.split(',').enumerate() {
        let entry = entry.trim();
        let place = index + 1;
        if entry.is_empty() {
            return Err(bad(format!("entry {place} is empty")));
        }
        let (named, count) = match entry.rsplit_once('*') {
            Some((named, count)) => (
                named,
                parse_count(count).map_err(|why| bad(format!("entry {place} ({entry}): {why}")))?,
            ),
            None => (entry, 1),
        };
        let (agent, model) = match named.split_once(':') {
            Some((agent, model)) => (agent, Some(model)),
            None => (named, None),
        };
        if !valid_agent(agent) {
            return Err(bad(format!(
                "entry {place} ({entry}): {agent:?} is not an agent's name"
            )));
        }
        if let Some(model) = model
            && (model.is_empty() || model.chars().any(|c| c.is_whitespace() || c == '*'))
        {
            return Err(bad(format!(
                "entry {place} ({entry}): the model after `:` is empty or has a space or `*`"
            )));
        }
        let total = attempts.len() as u32 + count;
        if total > MAX_ATTEMPTS {
            return Err(bad(format!(
                "{total} attempts or more; a race runs at most {MAX_ATTEMPTS}"
            )));
        }
        for _ in 0..count {
            attempts.push(AttemptSpec {
                agent: agent.to_owned(),
                model: model.map(str::to_owned),
            });
        }
    }
    if attempts.len() < 2 {
        return Err(bad(
            "a race needs at least 2 attempts (one attempt is a task: `ganger start`)".into(),
        ));
    }
    Ok(attempts)
}

fn parse_count(count: &str) -> std::result::Result<u32, String> {
    match count.parse::<u32>() {
        Ok(0) => Err("a count of 0 runs nothing".into()),
        Ok(n) if n <= MAX_ATTEMPTS => Ok(n),
        Ok(n) => Err(format!("{n} attempts; a race runs at most {MAX_ATTEMPTS}")),
        Err(_) => Err(format!(
            "the count after `*` must be a number, not {count:?}"
        )),
    }
}

/// An agent's name as the registry spells them: lower-case letters, digits and dashes.
fn valid_agent(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(agent: &str, model: Option<&str>) -> AttemptSpec {
        AttemptSpec {
            agent: agent.into(),
            model: model.map(str::to_owned),
        }
    }

    #[test]
    fn good_specs_give_their_attempts_in_order() {
        let m = Some("provider/model-a");
        let cases: Vec<(&str, Vec<AttemptSpec>)> = vec![
            (
                "alpha:provider/model-a*2,beta,gamma:gpt-x",
                vec![
                    a("alpha", m),
                    a("alpha", m),
                    a("beta", None),
                    a("gamma", Some("gpt-x")),
                ],
            ),
            ("beta,beta", vec![a("beta", None), a("beta", None)]),
            ("alpha*3", vec![a("alpha", None); 3]),
            (
                " alpha:p/m , beta ",
                vec![a("alpha", Some("p/m")), a("beta", None)],
            ),
            // A model may hold a colon of its own (the first one splits).
            ("delta:llama3:8b*2", vec![a("delta", Some("llama3:8b")); 2]),
            ("alpha*16", vec![a("alpha", None); 16]),
        ];
        for (spec, want) in cases {
            assert_eq!(parse(spec).unwrap(), want, "{spec}");
        }
    }

    #[test]
    fn every_bad_spec_is_refused_with_what_is_wrong() {
        let cases = [
            ("", "no attempts given"),
            ("   ", "no attempts given"),
            ("alpha", "at least 2 attempts"),
            ("alpha*1", "at least 2 attempts"),
            ("alpha,", "entry 2 is empty"),
            (",alpha", "entry 1 is empty"),
            ("alpha,,beta", "entry 2 is empty"),
            (":model,beta", "\"\" is not an agent's name"),
            ("Al Pha,beta", "\"Al Pha\" is not an agent's name"),
            ("alpha:,beta", "the model after `:` is empty"),
            ("alpha:p/m x,beta", "has a space"),
            ("alpha*0,beta", "a count of 0 runs nothing"),
            ("alpha*,beta", "must be a number, not \"\""),
            ("alpha*x", "must be a number, not \"x\""),
            ("alpha*-1", "must be a number, not \"-1\""),
            ("alpha*2*2", "entry 1 (alpha*2*2): \"alpha*2\" is not"),
            ("alpha*17", "17 attempts; a race runs at most 16"),
            ("alpha*99999999999", "must be a number"),
            (
                "alpha*10,beta*7",
                "17 attempts or more; a race runs at most 16",
            ),
        ];
        for (spec, want) in cases {
            let error = parse(spec).unwrap_err();
            assert_eq!(error.kind, crate::base::error::ErrorKind::Invalid, "{spec}");
            assert!(
                error.message.contains(want),
                "{spec}: {:?} lacks {want:?}",
                error.message
            );
        }
    }
}

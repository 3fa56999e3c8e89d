//! The `command` agent's settings and its argument templates: `{prompt}`, `{session}`,
//! `{model}` and `{title}` are filled in; an argument whose placeholder has no value (no model
//! given, no session yet) is left out, together with the option just before it when that is a
//! lone `-x`/`--xyz` (so `["--model", "{model}"]` disappears whole).

use crate::adapter::{PlanError, RoundRequest};
use serde::Deserialize;

/// `[agents.command]` in `ganger.toml`, as the engine hands it over.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
pub struct Settings {
    /// The program and its arguments for a new session.
    pub argv: Option<Vec<String>>,
    /// The same for a resumed session; default `argv`.
    pub resume_argv: Option<Vec<String>>,
    /// `argv` or `stdin` (the default).
    pub prompt: Option<String>,
    /// The stream format.
    pub format: Option<String>,
}

impl Settings {
    /// Reads the settings out of the request's configuration.
    pub fn of(request: &RoundRequest<'_>) -> Result<Settings, PlanError> {
        let settings: Settings = match request.config {
            Some(value) => {
                serde_json::from_value(value.clone()).map_err(|e| PlanError::CommandSettings {
                    reason: e.to_string(),
                })?
            }
            None => Settings::default(),
        };
        match settings.prompt.as_deref() {
            None | Some("stdin" | "argv") => Ok(settings),
            Some(other) => Err(PlanError::CommandSettings {
                reason: format!("prompt = {other:?}: expected \"argv\" or \"stdin\""),
            }),
        }
    }

    /// Whether the prompt goes on stdin.
    pub fn prompt_on_stdin(&self) -> bool {
        self.prompt.as_deref() != Some("argv")
    }
}

/// Fills a template; `values` maps a placeholder name to its value (`None`: no value).
pub fn fill_argv(template: &[String], values: &[(&str, Option<&str>)]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(template.len());
    for arg in template {
        let mut filled = arg.clone();
        let mut missing = false;
        for (name, value) in values {
            let placeholder = format!("{{{name}}}");
            if filled.contains(&placeholder) {
                match value {
                    Some(value) => filled = filled.replace(&placeholder, value),
                    None => missing = true,
                }
            }
        }
        if missing {
            let lone_placeholder = values.iter().any(|(name, _)| *arg == format!("{{{name}}}"));
            if lone_placeholder && out.last().is_some_and(|prev| is_option(prev)) {
                out.pop();
            }
            continue;
        }
        out.push(filled);
    }
    out
}

fn is_option(arg: &str) -> bool {
    arg.starts_with('-') && arg.len() > 1 && !arg.contains('=')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn placeholders_fill_in_and_a_missing_value_takes_its_option_with_it() {
        let template = strings(&[
            "--json",
            "--model",
            "{model}",
            "--title={title}",
            "{prompt}",
        ]);
        let filled = fill_argv(
            &template,
            &[
                ("prompt", Some("-a prompt with spaces")),
                ("model", None),
                ("title", Some("t1")),
            ],
        );
        assert_eq!(
            filled,
            strings(&["--json", "--title=t1", "-a prompt with spaces"])
        );
        let with_model = fill_argv(&template[..3], &[("model", Some("m/x"))]);
        assert_eq!(with_model, strings(&["--json", "--model", "m/x"]));
    }

    #[test]
    fn a_missing_value_inside_a_longer_argument_drops_that_argument_only() {
        let filled = fill_argv(
            &strings(&["-v", "--session={session}"]),
            &[("session", None)],
        );
        assert_eq!(filled, strings(&["-v"]));
    }
}

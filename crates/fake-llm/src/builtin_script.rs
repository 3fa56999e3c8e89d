//! The script used when none is given (`ganger fake-llm` without `--script`, dry runs).
//!
//! It only answers text, because tool names and argument shapes differ between agent CLIs
//! and a dry run must work with every one of them; the text names the prompts and the size of
//! the history, so a resumed session is visible in the agent's output.

use crate::script::Script;

/// The answer of the built-in script to every prompt.
pub const BUILTIN_ANSWER: &str = "Dry run: fake-llm answered without a model. {{history}}";

impl Script {
    /// The built-in script: one text turn, repeated for every prompt, and the usual default
    /// answer for side requests.
    pub fn builtin() -> Script {
        Script::new().text(BUILTIN_ANSWER).repeat(true)
    }
}

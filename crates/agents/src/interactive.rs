//! The agent's own interactive interface on a session, for `ganger attach`: the command of a
//! round that resumes the session, with what makes it headless taken out (the print mode, the
//! stream format, the prompt), so that the person sees the same session, model, settings and
//! permissions the rounds use, and stdin is theirs.

use crate::adapter::CommandPlan;
use crate::capabilities::Interactive;

/// What makes one CLI's round command headless: the words taken out of it for the CLI's own
/// interactive interface ([`crate::Adapter::headless`]).
#[derive(Debug, Clone, Copy)]
pub struct Headless {
    /// Words removed when they come first (`run`, `exec`).
    pub leading: &'static [&'static str],
    /// Flags removed alone.
    pub flags: &'static [&'static str],
    /// Options removed with the value after them.
    pub valued: &'static [&'static str],
    /// Prefixes of `--option=value` words removed (`--prompt=`).
    pub joined: &'static [&'static str],
    /// A last word removed (Codex's `-`: the prompt on stdin).
    pub trailing: Option<&'static str>,
}

impl Headless {
    /// The round's command made interactive: the same program, environment and files, the
    /// headless words removed, stdin left to the terminal.
    pub(crate) fn strip(&self, mut plan: CommandPlan) -> CommandPlan {
        let mut args = plan.args.into_iter().peekable();
        let mut kept = Vec::new();
        while let Some(first) = args.peek() {
            if self.leading.contains(&first.as_str()) {
                args.next();
            } else {
                break;
            }
        }
        while let Some(arg) = args.next() {
            if self.flags.contains(&arg.as_str()) {
                continue;
            }
            if self.valued.contains(&arg.as_str()) {
                args.next();
                continue;
            }
            if self.joined.iter().any(|prefix| arg.starts_with(prefix)) {
                continue;
            }
            kept.push(arg);
        }
        if self.trailing.is_some() && kept.last().map(String::as_str) == self.trailing {
            kept.pop();
        }
        plan.args = kept;
        plan.stdin = None;
        plan
    }

    /// The round's command made interactive, with the round's own program.
    pub(crate) fn interactive(&self, plan: CommandPlan) -> Interactive {
        Interactive {
            program: None,
            plan: self.strip(plan),
        }
    }
}

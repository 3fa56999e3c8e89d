//! `[permissions]`: what ganger answers an agent that asks before a tool runs (a warm
//! round's agent: docs/warm.md); the decisions themselves are `warm::policy`'s.

use serde::{Deserialize, Serialize};

/// `[permissions]` in `ganger.toml`: rules of the form `KIND:PATTERN`, where KIND is ACP's kind
/// of the call (`execute`, `edit`, `delete`, `move`, `fetch`, `read`, ...) or the tool's name,
/// or `*`; PATTERN is matched against the command of an `execute` call and against each path
/// of any other (`*` matches any run of characters). `deny = ["execute:git push*"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PermissionRules {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

impl PermissionRules {
    /// The first rule that does not read as `KIND:PATTERN`, with why.
    pub fn problem(&self) -> Option<String> {
        self.allow
            .iter()
            .chain(&self.deny)
            .find(|rule| permission_rule(rule).is_none())
            .map(|rule| {
                format!("permission rule {rule:?} is not KIND:PATTERN (e.g. \"execute:git push*\")")
            })
    }
}

pub(crate) fn permission_rule(rule: &str) -> Option<(&str, &str)> {
    let (kind, pattern) = rule.split_once(':')?;
    (!kind.trim().is_empty() && !pattern.is_empty()).then_some((kind.trim(), pattern))
}

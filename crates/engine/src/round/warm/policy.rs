//! Tool permissions decided by ganger for a warm round: the agent asks before a tool runs
//! (ACP's `session/request_permission`), and ganger answers from the round's policy. In
//! order: a `deny` rule of `[permissions]` in `ganger.toml` that matches refuses; an `allow`
//! rule that matches allows; a read-only round is refused edits, deletions, moves and
//! commands; a change of a path outside the worktree is refused (unless a sandbox confines
//! the round's writes: then the sandbox refuses it, as in a cold round); anything else is
//! allowed.
//! Each decision names the rule that made it, for the round's log.

use crate::base::config::PermissionRules;
use crate::base::config::permission_rule as split;
use ganger_agents::acp::protocol::PermissionAsk;
use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

/// What one round allows: given by the round host with every turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    pub read_only: bool,
    pub worktree: PathBuf,
    pub rules: PermissionRules,
    /// The round runs in a sandbox that confines the agent's writes itself (bubblewrap): as
    /// in a cold round there, a path outside the worktree is the sandbox's to refuse (the
    /// tool fails), not ganger's.
    #[serde(default)]
    pub sandboxed: bool,
}

/// A decision and the rule that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allow: bool,
    pub rule: String,
}

/// Kinds of call that change files or run commands.
const CHANGING: &[&str] = &["edit", "delete", "move", "execute"];

impl Policy {
    /// Decides `ask`.
    pub fn decide(&self, ask: &PermissionAsk) -> Decision {
        let kind = ask.kind.as_deref().unwrap_or("other");
        let subjects = self.subjects(ask, kind);
        let matches = |rule: &str| {
            split(rule).is_some_and(|(rule_kind, pattern)| {
                (rule_kind == "*" || rule_kind == kind || rule_kind == ask.tool)
                    && subjects.iter().any(|subject| glob(pattern, subject))
            })
        };
        if let Some(rule) = self.rules.deny.iter().find(|rule| matches(rule)) {
            return Decision {
                allow: false,
                rule: format!("deny {rule:?} ([permissions] in ganger.toml)"),
            };
        }
        if let Some(rule) = self.rules.allow.iter().find(|rule| matches(rule)) {
            return Decision {
                allow: true,
                rule: format!("allow {rule:?} ([permissions] in ganger.toml)"),
            };
        }
        if self.read_only && CHANGING.contains(&kind) {
            return Decision {
                allow: false,
                rule: format!("a read-only round may not {kind}"),
            };
        }
        if !self.sandboxed
            && kind != "execute"
            && kind != "fetch"
            && kind != "read"
            && let Some(outside) = ask.paths.iter().find(|p| !self.inside(p))
        {
            return Decision {
                allow: false,
                rule: format!("{outside} is outside the worktree"),
            };
        }
        Decision {
            allow: true,
            rule: "allowed by default".to_owned(),
        }
    }

    /// What the patterns are matched against: the command of a command, else the paths.
    fn subjects(&self, ask: &PermissionAsk, kind: &str) -> Vec<String> {
        let command = ["command", "cmd"]
            .iter()
            .find_map(|key| ask.input.get(*key))
            .map(|c| match c.as_array() {
                Some(parts) => parts
                    .iter()
                    .filter_map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                None => c.as_str().unwrap_or_default().to_owned(),
            });
        match (kind, command) {
            ("execute", Some(command)) => vec![command],
            // An agent may ask about a shell call with no input at all, its title the command
            // (docs/warm.md).
            ("execute", None) => vec![ask.tool.clone()],
            (_, command) => {
                let mut subjects = ask.paths.clone();
                for key in ["filePath", "file_path", "path", "url"] {
                    if let Some(path) = ask.input.get(key).and_then(|p| p.as_str()) {
                        subjects.push(path.to_owned());
                    }
                }
                subjects.extend(command);
                // A call that names nothing is still matched by a rule of its kind whose
                // pattern is `*`.
                if subjects.is_empty() {
                    subjects.push(String::new());
                }
                subjects
            }
        }
    }

    fn inside(&self, path: &str) -> bool {
        let path = Path::new(path);
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.worktree.join(path)
        };
        normalize(&joined).starts_with(normalize(&self.worktree))
    }
}

/// `path` with `.` and `..` taken out, as text (the file may not exist yet).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ask(kind: &str, input: serde_json::Value, paths: &[&str]) -> PermissionAsk {
        PermissionAsk {
            tool: kind.to_owned(),
            kind: Some(kind.to_owned()),
            input,
            paths: paths.iter().map(|p| p.to_string()).collect(),
            options: Vec::new(),
        }
    }

    fn policy(read_only: bool, allow: &[&str], deny: &[&str]) -> Policy {
        Policy {
            read_only,
            worktree: "/w/site-agent-x".into(),
            rules: PermissionRules {
                allow: allow.iter().map(|r| r.to_string()).collect(),
                deny: deny.iter().map(|r| r.to_string()).collect(),
            },
            sandboxed: false,
        }
    }

    #[test]
    fn a_command_named_only_by_its_title_and_a_call_that_names_nothing_meet_the_rules() {
        let p = policy(false, &[], &["execute:git push*", "edit:*"]);
        // A shell call asked about over ACP with no input, the command as its title.
        let titled = PermissionAsk {
            tool: "git push origin main > pushed.txt".into(),
            ..ask("execute", serde_json::Value::Null, &[])
        };
        let decided = p.decide(&titled);
        assert!(!decided.allow, "{}", decided.rule);
        assert!(decided.rule.contains("git push"), "{}", decided.rule);
        let nameless = ask("edit", serde_json::Value::Null, &[]);
        assert!(!p.decide(&nameless).allow);
    }

    #[test]
    fn rules_then_read_only_then_the_worktree_decide() {
        let p = policy(false, &["execute:cargo test*"], &["execute:git push*"]);
        let push = p.decide(&ask(
            "execute",
            json!({"command": "git push origin main"}),
            &[],
        ));
        assert!(!push.allow);
        assert!(push.rule.contains("git push"), "{}", push.rule);
        assert!(
            p.decide(&ask("execute", json!({"command": "ls"}), &[]))
                .allow
        );
        let inside = ask("edit", json!({"filePath": "src/a.rs"}), &["src/a.rs"]);
        assert!(p.decide(&inside).allow);
        let outside = ask("edit", json!({}), &["/w/site-agent-x/../site/x.rs"]);
        let refused = p.decide(&outside);
        assert!(!refused.allow);
        assert!(refused.rule.contains("outside the worktree"));
        let sandboxed = Policy {
            sandboxed: true,
            ..p.clone()
        };
        assert!(sandboxed.decide(&outside).allow, "the sandbox refuses it");
        let push_ask = ask("execute", json!({"command": "git push"}), &[]);
        assert!(!sandboxed.decide(&push_ask).allow, "rules still hold");

        let ro = policy(true, &["execute:cargo test*"], &[]);
        assert!(!ro.decide(&inside).allow);
        assert!(
            !ro.decide(&ask("execute", json!({"command": "rm -rf x"}), &[]))
                .allow
        );
        assert!(
            ro.decide(&ask("execute", json!({"command": "cargo test -q"}), &[]))
                .allow
        );
        assert!(ro.decide(&ask("read", json!({}), &["/etc/hosts"])).allow);
    }

    #[test]
    fn patterns_and_bad_rules() {
        assert!(glob("git push*", "git push"));
        assert!(glob("*secret*", "cat my-secret.txt"));
        assert!(!glob("git push*", "echo git push"));
        assert!(glob("exact", "exact"));
        let bad = PermissionRules {
            allow: vec!["cargo test".into()],
            deny: vec![],
        };
        assert!(bad.problem().unwrap().contains("KIND:PATTERN"));
        assert_eq!(policy(false, &["*:x"], &[]).rules.problem(), None);
    }
}

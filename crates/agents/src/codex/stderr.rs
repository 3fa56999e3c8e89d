//! What Codex reports only on stderr: a call its approval settings refused.
//!
//! Measured with Codex 0.171.0 (`approval_policy = "never"`): a patch outside the writable
//! roots, or any patch in the read-only sandbox, is refused with **no JSON item at all**; the
//! model is told and carries on, and the only trace is a log line on stderr:
//!
//! ```text
//! 2026-12-01T14:36:17.101351Z ERROR codex_core::tools::router: error=patch rejected: writing outside of the project; rejected by user approval settings
//! ```
//!
//! Such a line is read as [`Event::PermissionRejected`], so a Codex round fails on a refusal
//! as the other agents' rounds do. A shell command the sandbox stops is an ordinary failed
//! command (`Read-only file system`), which cannot be told from any other.

use crate::codex::PATCH_TOOL;
use ganger_events::Event;

/// Where Codex's tool router logs a refused call.
const ROUTER_ERROR: &str = "codex_core::tools::router: error=";

/// How the refusal's text ends.
const BY_APPROVAL: &str = "; rejected by user approval settings";

/// The refusal one stderr line reports, if it reports one.
pub fn stderr_event(line: &[u8]) -> Option<Event> {
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let (_, error) = line.split_once(ROUTER_ERROR)?;
    let refusal = error.strip_suffix(BY_APPROVAL)?;
    let (what, reason) = refusal.split_once(" rejected: ")?;
    let tool = match what.trim() {
        "patch" => PATCH_TOOL.to_owned(),
        other => other.to_owned(),
    };
    Some(Event::PermissionRejected {
        tool,
        message: format!("{} (rejected by Codex's approval settings)", reason.trim()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_patches_are_read_and_other_lines_are_not() {
        assert_eq!(
            stderr_event(b"2026-12-01T14:36:17.101351Z ERROR codex_core::tools::router: error=patch rejected: writing outside of the project; rejected by user approval settings\n"),
            Some(Event::PermissionRejected {
                tool: "apply_patch".into(),
                message: "writing outside of the project (rejected by Codex's approval settings)"
                    .into(),
            })
        );
        assert_eq!(
            stderr_event(b"ERROR codex_core::tools::router: error=patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings"),
            Some(Event::PermissionRejected {
                tool: "apply_patch".into(),
                message: "writing is blocked by read-only sandbox (rejected by Codex's approval settings)".into(),
            })
        );
        for other in [
            &b"ERROR codex_core::tools::router: error=apply_patch verification failed: no such file"[..],
            b"Reading prompt from stdin...",
            b"\xff\xfe",
            b"",
        ] {
            assert_eq!(stderr_event(other), None);
        }
    }
}

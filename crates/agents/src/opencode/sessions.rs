//! Which of OpenCode's saved sessions (`opencode session list --format json`) a round made,
//! when its stream never named it: the one with the round's title, in its worktree, made since
//! the round began (the newest if several). Measured with 1.18.33: a session killed while the
//! model held its first answer is listed as
//! `{"id":"ses_…","title":"SLUG","created":MS,"updated":MS,"projectId":"…","directory":"/…"}`
//! and resuming it sends the brief (docs/agents/opencode-measured.md).

use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Deserialize)]
struct Listed {
    id: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    created: i64,
    #[serde(default)]
    directory: String,
}

/// The session titled `title` in `directory`, created at `since_ms` or later (the newest).
pub fn pick_session(listing: &str, title: &str, directory: &Path, since_ms: i64) -> Option<String> {
    let sessions: Vec<Listed> = serde_json::from_str(listing.trim()).ok()?;
    sessions
        .into_iter()
        .filter(|s| {
            s.title == title && Path::new(&s.directory) == directory && s.created >= since_ms
        })
        .max_by_key(|s| s.created)
        .map(|s| s.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_session_with_the_title_in_the_worktree_since_the_round_is_picked() {
        let listing = r#"[
          {"id":"ses_old","title":"x","created":100,"updated":1,"projectId":"p","directory":"/w"},
          {"id":"ses_new","title":"x","created":300,"updated":1,"projectId":"p","directory":"/w"},
          {"id":"ses_other","title":"y","created":400,"updated":1,"projectId":"p","directory":"/w"},
          {"id":"ses_elsewhere","title":"x","created":500,"updated":1,"projectId":"p","directory":"/v"}
        ]"#;
        assert_eq!(
            pick_session(listing, "x", Path::new("/w"), 200).as_deref(),
            Some("ses_new")
        );
        assert_eq!(pick_session(listing, "x", Path::new("/w"), 301), None);
        assert_eq!(pick_session("not json", "x", Path::new("/w"), 0), None);
        assert_eq!(pick_session("[]", "x", Path::new("/w"), 0), None);
    }
}

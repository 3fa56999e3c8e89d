//! The full parse of single Codex lines: tool items, notices and lines of unexpected shapes.
#![cfg(test)]

use ganger_agents::codex::{http_status, parse_line};
use ganger_events::{Event, ToolStatus};

#[test]
fn tool_items_start_and_end_under_ganger_s_names() {
    let started = parse_line(br#"{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"docs","tool":"search","status":"in_progress"}}"#);
    assert_eq!(
        started.events,
        [Event::ToolStarted {
            name: "docs.search".into(),
            title: None
        }]
    );
    let failed = parse_line(br#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"touch /x","aggregated_output":"Read-only file system","exit_code":1,"status":"failed"}}"#);
    assert_eq!(
        failed.events,
        [Event::Tool {
            name: "shell".into(),
            status: ToolStatus::Error,
            title: Some("touch /x".into()),
            error: Some("exited with code 1".into()),
        }]
    );
    let patch = parse_line(br#"{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"/w/a","kind":"add"},{"path":"/w/b","kind":"update"}],"status":"completed"}}"#);
    assert!(
        matches!(&patch.events[..], [Event::Tool { name, status: ToolStatus::Completed, title: Some(title), .. }] if name == "apply_patch" && title == "/w/a, /w/b")
    );
}

#[test]
fn notices_reasoning_and_updates_yield_nothing_and_unknown_items_are_unknown() {
    for line in [
        r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `gpt-fake` not found."}}"#,
        r#"{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"thinking"}}"#,
        r#"{"type":"item.updated","item":{"id":"item_2","type":"todo_list","items":[]}}"#,
        r#"{"type":"item.started","item":{"id":"item_3","type":"agent_message","text":""}}"#,
    ] {
        let parsed = parse_line(line.as_bytes());
        assert!(parsed.kind.is_some() && parsed.events.is_empty(), "{line}");
    }
    let odd = parse_line(br#"{"type":"item.completed","item":{"id":"item_4","type":"hologram"}}"#);
    assert_eq!(
        odd.events,
        [Event::Unknown {
            kind: "item.completed:hologram".into()
        }]
    );
    assert_eq!(parse_line(br#"{"type":7}"#).kind, None);
    let retry = parse_line(br#"{"type":"error","message":"Reconnecting... 2/5 (x)"}"#);
    assert!(!retry.is_progress());
}

#[test]
fn the_http_status_is_read_from_codex_s_wording() {
    assert_eq!(
        http_status("unexpected status 401 Unauthorized: no"),
        Some(401)
    );
    assert_eq!(http_status("unexpected status 5"), None);
    assert_eq!(
        http_status("We’re currently experiencing high demand"),
        None
    );
}

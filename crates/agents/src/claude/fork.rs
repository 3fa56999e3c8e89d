//! Where a Claude Code session is forked to go back to the end of a round. Claude Code forks
//! at a point itself, while it runs the next prompt (`--resume SESSION --resume-session-at
//! UUID --fork-session`, in [`super::command`]): the point is the uuid of the round's last
//! answer of the main conversation (not a sub-agent's), read here from the round's stream.

use serde_json::Value;

/// The uuid of the last `assistant` event of `session`'s main conversation in `stream`.
pub(crate) fn point(stream: &str, session: &str) -> Option<String> {
    stream
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| {
            event["type"] == "assistant"
                && event["parent_tool_use_id"].is_null()
                && event["session_id"] == session
        })
        .find_map(|event| event["uuid"].as_str().map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_point_is_the_last_answer_of_the_main_conversation() {
        let stream = [
            r#"{"type":"system","subtype":"init","session_id":"s1","uuid":"u0"}"#,
            r#"{"type":"assistant","session_id":"s1","parent_tool_use_id":null,"uuid":"u1"}"#,
            r#"{"type":"assistant","session_id":"s1","parent_tool_use_id":null,"uuid":"u2"}"#,
            r#"{"type":"assistant","session_id":"s1","parent_tool_use_id":"toolu_1","uuid":"u3"}"#,
            r#"{"type":"assistant","session_id":"s0","parent_tool_use_id":null,"uuid":"u4"}"#,
            r#"{"type":"result","session_id":"s1","uuid":"u5"}"#,
            "not json",
        ]
        .join("\n");
        assert_eq!(point(&stream, "s1").as_deref(), Some("u2"));
        assert_eq!(point(&stream, "s0").as_deref(), Some("u4"));
        assert_eq!(point(&stream, "s9"), None);
    }
}

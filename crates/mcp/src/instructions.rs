//! The supervise loop in a few lines: sent as the server's `instructions` when a client
//! connects, and written by `ganger init --supervisor` into the instructions file the
//! supervising agent reads (a skill, AGENTS.md, CLAUDE.md, GEMINI.md).

/// How to supervise workers through ganger's tools.
pub const SUPERVISE_LOOP: &str = "\
You supervise coding workers through ganger's tools (MCP server `ganger`). Each task is one \
worker agent in its own git worktree and branch, with a session that every later round \
continues.

The loop:
1. `start` a task per concern, with a self-contained brief that ends by asking for a last \
line `DONE: <one-line result>`.
2. `wait` for the round (call again while it still runs), or `watch` when several tasks run: \
it blocks until one of them has news; `ack` what you handled.
3. Read the report (`wait` returns it; `report` later) and its `DONE:` line, then the `diff`: \
the diff and the checks are the evidence, the worker's claim is not.
4. `fix` with exactly what is wrong (the worker keeps its conversation), then `wait` again; or \
`merge` when the work is right. `cancel` or `rewind` a round that went wrong.

You act as one commander: only a task's owner fixes, cancels, merges or hands it on \
(`transfer`, `release`); a tool error names the owner. Errors are one line with a hint: read \
them and correct the call.
";

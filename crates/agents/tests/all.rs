//! The adapters' integration tests, one module per subject, in one test binary: one link and
//! one copy of the shared fixtures instead of one per file.

mod common;
mod stream_json_common;

mod capabilities;
mod claude_plan;
mod codex_app_server;
mod codex_normalize;
mod codex_plan;
mod codex_snapshots;
mod codex_verdict;
mod gemini_normalize;
mod gemini_plan;
mod gemini_snapshots;
mod gemini_verdict;
mod interactive_plan;
mod opencode_fast_path;
mod opencode_normalize;
mod opencode_snapshots;
mod opencode_verdict;
mod qwen_plan;
mod scan_fields;
mod scan_validity;
mod stream_json_fold;
mod stream_json_normalize;
mod stream_json_snapshots;
mod stream_json_verdict;
mod throughput;

//! Integration tests of the fake model server through plain HTTP, the way agents reach it.

#![expect(
    clippy::unwrap_used,
    reason = "the helpers shared by the tests fail loudly on what a test did not expect"
)]

mod anthropic;
mod bound_server;
mod faults;
mod gemini;
mod http_client;
mod openai_chat;
mod openai_responses;
mod recording;
mod script_toml;
mod turn_matching;

//! The gateway's integration tests, one module per subject in one binary: a real gateway
//! on loopback between plain clients and the scripted model (or a small server of the
//! test's own where the test needs to hold a stream or echo a tunnel).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

mod common;

mod forwarding;
mod one_round;
mod streaming;
mod tls_upstream;
mod tunnel;

//! Exit codes, documented in one place (also in `ganger --help` and README.md):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | the round is `done` (or the command did what it was asked) |
//! | 1 | the round ended in any other status: `failed`, `timed-out`, `stalled`, `cancelled`, `interrupted` |
//! | 2 | bad arguments or state (the message says which); nothing was created or changed |
//! | 3 | the model is not available (the message names the closest available one) |
//! | 4 | `wait` timed out with the round still running |
//! | 70 | the environment failed (the database, the disk, git, Docker, a program that could not be run) or ganger did; the message and its causes say which, and nothing committed is lost |
//!
//! A round's exit code is never the agent's own: the report says which status and why.

/// The round is done, or the command succeeded.
pub const OK: u8 = 0;
/// The round ended in a status other than `done`.
pub const NOT_DONE: u8 = 1;
/// Bad arguments or state.
pub const INVALID: u8 = 2;
/// `wait` timed out with the round still running.
pub const STILL_RUNNING: u8 = 4;
/// The environment (or ganger itself) failed; sysexits' EX_SOFTWARE.
pub const ENVIRONMENT: u8 = 70;

/// The text `--help` shows about exit codes.
pub const HELP: &str = "Exit codes: 0 the round is done (or the command succeeded); 1 the round ended \
in another status (failed, timed-out, stalled, cancelled, interrupted); 2 bad arguments or state; \
3 the model is not available; 4 wait timed out with the round still running; 70 the environment \
(database, disk, git, Docker) or ganger itself failed, named with its cause.";

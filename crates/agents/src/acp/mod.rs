//! The Agent Client Protocol (ACP, JSON-RPC 2.0 over the agent's stdin and stdout, one message
//! per line), as ganger speaks it to an agent kept warm: the messages ganger sends
//! ([`protocol`]), how a warm round's stream becomes ganger's events ([`AcpStream`]), and
//! whether such a round is done ([`verdict`]); and the reader of a warm stream in an agent's
//! own cold format with ganger's lines among its own ([`GangerLines`]). One client for every agent that speaks ACP;
//! what differs per agent (the command line that starts ACP mode, its permission settings)
//! is the agent's [`crate::WarmPlan`].

mod ganger_lines;
pub mod protocol;
mod stream;
mod verdict;

pub use ganger_lines::GangerLines;
pub use stream::{AcpStream, BY_GANGER, Refusal, WarmOrCold};
pub use verdict::{guarded_verdict, verdict, without_own_guards};

/// The key of the lines ganger itself writes into a warm round's stream (a turn's start, a
/// permission decision), beside the agent's own messages: `{"ganger":"turn",...}`.
pub const GANGER_KEY: &str = "ganger";

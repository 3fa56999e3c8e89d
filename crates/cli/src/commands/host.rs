//! `ganger host SLUG N --claim CLAIM` (hidden): the detached round host.

use crate::Outcome;
use crate::commands::round::status_code;
use ganger_engine::{EngineError, HandedClaim, Workspace};

pub(crate) fn run(ws: &Workspace, args: crate::args::HostArgs) -> Outcome {
    let handed = args
        .claim
        .as_deref()
        .map(HandedClaim::from_arg)
        .transpose()
        .map_err(|why| EngineError::invalid(format!("--claim: {why}")))?;
    let outcome =
        ganger_engine::run_detached_host(ws, &args.slug, args.round, args.until_green, handed)?;
    Ok(status_code(outcome.round.status))
}

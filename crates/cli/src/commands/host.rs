//! `ganger host SLUG N` (hidden): the detached round host.

use crate::Outcome;
use crate::commands::round::status_code;
use ganger_engine::Workspace;

pub(crate) fn run(ws: &Workspace, args: crate::args::HostArgs) -> Outcome {
    let outcome = ganger_engine::run_detached_host(ws, &args.slug, args.round, args.until_green)?;
    Ok(status_code(outcome.round.status))
}

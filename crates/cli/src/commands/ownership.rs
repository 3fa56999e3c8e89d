//! `assign`, `transfer`, `release`, `policy`, `allow`: who owns a task and what it lets in.

use super::round::notices;
use crate::Outcome;
use crate::args::{AllowArgs, AssignArgs, OwnerArgs, PolicyArgs, TransferArgs};
use crate::exit;
use crate::printer;
use ganger_engine::{OwnershipAction, OwnershipReport, Workspace, change_ownership};

fn run(
    ws: &Workspace,
    slug: &str,
    action: OwnershipAction,
    as_name: Option<&str>,
    json: bool,
) -> Outcome {
    let report = change_ownership(ws, slug, &action, as_name, &mut notices(json))?;
    if json {
        printer::emit_json(&report)?;
    } else {
        printer::emit(&describe(&report))?;
    }
    Ok(exit::OK)
}

/// One line: who owns the task now and what it lets in.
fn describe(report: &OwnershipReport) -> String {
    let owner = if report.owner.is_empty() {
        "nobody".to_owned()
    } else {
        report.owner.clone()
    };
    let allowed = if report.allowed.is_empty() {
        String::new()
    } else {
        format!(", also allowed: {}", report.allowed.join(", "))
    };
    format!(
        "{}: owned by {owner} (generation {}), new rounds: {}{allowed}\n",
        report.task, report.generation, report.inbound
    )
}

pub(crate) fn assign(ws: &Workspace, args: AssignArgs) -> Outcome {
    let action = OwnershipAction::Assign { to: args.to };
    run(ws, &args.slug, action, args.as_name.as_deref(), args.json)
}

pub(crate) fn transfer(ws: &Workspace, args: TransferArgs) -> Outcome {
    let action = OwnershipAction::Transfer { to: args.to };
    run(ws, &args.slug, action, args.as_name.as_deref(), args.json)
}

pub(crate) fn release(ws: &Workspace, args: OwnerArgs) -> Outcome {
    run(
        ws,
        &args.slug,
        OwnershipAction::Release,
        args.as_name.as_deref(),
        args.json,
    )
}

pub(crate) fn policy(ws: &Workspace, args: PolicyArgs) -> Outcome {
    let action = OwnershipAction::Policy(args.policy);
    run(ws, &args.slug, action, args.as_name.as_deref(), args.json)
}

pub(crate) fn allow(ws: &Workspace, args: AllowArgs) -> Outcome {
    let action = OwnershipAction::Allow {
        names: args.names,
        remove: args.remove,
    };
    run(ws, &args.slug, action, args.as_name.as_deref(), args.json)
}

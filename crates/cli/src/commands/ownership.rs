//! `assign`, `transfer`, `release`, `policy`, `allow`: who owns a task and what it lets in;
//! `adopt`: a session started by hand becomes a task; `attach`: a person takes over.

use crate::Outcome;
use crate::args::{
    AdoptArgs, AllowArgs, AssignArgs, AttachArgs, OwnerArgs, PolicyArgs, TransferArgs,
};
use crate::exit;
use crate::printer::Printer;
use ganger_engine::documents::Adopted;
use ganger_engine::{Engine, OwnershipAction, OwnershipReport};

fn run(
    engine: &Engine,
    slug: &str,
    action: OwnershipAction,
    as_name: Option<&str>,
    json: bool,
) -> Outcome {
    let out = Printer::new(json);
    let report = engine.ownership(slug, &action, as_name, &mut out.notices())?;
    out.print(&report, || describe(&report))?;
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

pub(crate) fn assign(engine: &Engine, args: AssignArgs) -> Outcome {
    let action = OwnershipAction::Assign { to: args.to };
    run(
        engine,
        &args.slug,
        action,
        args.as_name.as_deref(),
        args.json,
    )
}

pub(crate) fn transfer(engine: &Engine, args: TransferArgs) -> Outcome {
    let action = OwnershipAction::Transfer { to: args.to };
    run(
        engine,
        &args.slug,
        action,
        args.as_name.as_deref(),
        args.json,
    )
}

pub(crate) fn release(engine: &Engine, args: OwnerArgs) -> Outcome {
    run(
        engine,
        &args.slug,
        OwnershipAction::Release,
        args.as_name.as_deref(),
        args.json,
    )
}

pub(crate) fn policy(engine: &Engine, args: PolicyArgs) -> Outcome {
    let action = OwnershipAction::Policy(args.policy);
    run(
        engine,
        &args.slug,
        action,
        args.as_name.as_deref(),
        args.json,
    )
}

pub(crate) fn allow(engine: &Engine, args: AllowArgs) -> Outcome {
    let action = OwnershipAction::Allow {
        names: args.names,
        remove: args.remove,
    };
    run(
        engine,
        &args.slug,
        action,
        args.as_name.as_deref(),
        args.json,
    )
}

pub(crate) fn adopt(engine: &Engine, args: AdoptArgs) -> Outcome {
    let options = ganger_engine::AdoptOptions {
        slug: args.slug,
        agent: args.agent,
        session: args.session,
        worktree: args.worktree,
        model: args.model,
        commander: args.as_name,
    };
    let out = Printer::new(args.json);
    let task = engine.adopt(options, &mut out.notices())?;
    out.print(&Adopted::of(&task), || {
        format!(
            "adopted session {} of {} in {} as task {} (owned by {}); send its next round with `ganger fix {}`\n",
            task.session.as_deref().unwrap_or("?"),
            task.agent,
            task.worktree.display(),
            task.slug,
            task.owner,
            task.slug
        )
    })?;
    Ok(exit::OK)
}

/// Exits with the agent's own exit code (capped at 255), so a script can tell how it ended.
pub(crate) fn attach(engine: &Engine, args: AttachArgs) -> Outcome {
    let code = engine.attach(
        &args.slug,
        args.as_name.as_deref(),
        &mut Printer::new(false).notices(),
    )?;
    Ok(u8::try_from(code).unwrap_or(1))
}

//! The commands that look at tasks: `status`, `wait`, `cancel`, `diff`.

use super::round::status_code;
use crate::Outcome;
use crate::args::{CancelArgs, DiffArgs, StatusArgs, WaitArgs};
use crate::exit;
use crate::printer::{self, Printer};
use ganger_engine::documents::StillRunning;
use ganger_engine::{Engine, StatusRequest, StatusView, WaitOutcome};
use std::io::IsTerminal;

pub(crate) fn status(engine: &Engine, args: StatusArgs) -> Outcome {
    let out = Printer::new(args.json);
    if let Some(key) = &args.group_by {
        let groups = engine.groups(key)?;
        out.print(&groups, || printer::groups_text(&groups))?;
        return Ok(exit::OK);
    }
    // A race's slug shows the race's report.
    if let Some(slug) = args.slug.as_deref().filter(|_| !args.tree)
        && let Some(report) = engine.race_report(slug)?
    {
        out.print(&report, || printer::race_text(&report))?;
        return Ok(exit::OK);
    }
    let request = StatusRequest {
        slug: args.slug.clone(),
        tree: args.tree,
    };
    let view = engine.status(&request, &mut out.notices())?;
    let root = engine.workspace().state.root();
    match view {
        StatusView::List(list) => out.print(&list, || printer::task_table(&list, root))?,
        StatusView::Round(report) => out.print(&report, || printer::report_text(&report))?,
        StatusView::Pipeline(report) => out.print(&report, || printer::pipeline_text(&report))?,
    }
    Ok(exit::OK)
}

pub(crate) fn wait(engine: &Engine, args: WaitArgs) -> Outcome {
    let out = Printer::new(args.json);
    match engine.wait(&args.slug, args.timeout, &mut out.notices())? {
        WaitOutcome::Ended(report) => {
            out.print(&report, || printer::report_text(&report))?;
            Ok(status_code(report.status))
        }
        WaitOutcome::StillRunning {
            number,
            host_pid,
            started_at,
        } => {
            let still = StillRunning::new(&args.slug, number, host_pid, &started_at);
            out.print(&still, || {
                let host = host_pid
                    .map(|p| format!("host pid {p}, "))
                    .unwrap_or_default();
                format!(
                    "round {number} of {} is still running ({host}started {started_at}); wait again\n",
                    args.slug
                )
            })?;
            Ok(exit::STILL_RUNNING)
        }
    }
}

pub(crate) fn cancel(engine: &Engine, args: CancelArgs) -> Outcome {
    let out = Printer::new(args.json);
    let report = engine.cancel(&args.slug, args.as_name.as_deref(), &mut out.notices())?;
    out.print(&report, || printer::report_text(&report))?;
    Ok(exit::OK)
}

pub(crate) fn diff(engine: &Engine, args: DiffArgs) -> Outcome {
    let terminal = std::io::stdout().is_terminal();
    let color = terminal && std::env::var_os("NO_COLOR").is_none();
    let bytes = engine.diff(&args.slug, args.stat, color)?;
    if terminal {
        // The agent's files may hold terminal controls: only git's colours reach the terminal.
        let text = String::from_utf8_lossy(&bytes);
        printer::emit_verbatim(printer::escape_controls_but_colours(&text).as_bytes())?;
    } else {
        // A patch, exact.
        printer::emit_verbatim(&bytes)?;
    }
    Ok(exit::OK)
}

//! `ganger plan`, `approve` and `reject`: run the pipeline's next part in the foreground and
//! print the pipeline's report. Exit 0 when it reached what was asked (a plan waiting for a
//! decision, or the work done with every reviewer passing), 1 when it failed.

use super::round::brief;
use crate::args::{PipelineArgs, PlanArgs, RejectArgs};
use crate::printer::{self, Printer};
use crate::{Failure, Outcome, exit};
use ganger_engine::{Engine, EngineError, PipelineReport, PlanOptions};

fn print(report: &PipelineReport, out: Printer, wanted: &str) -> Outcome {
    out.print(report, || printer::pipeline_text(report))?;
    Ok(if report.stage == wanted {
        exit::OK
    } else {
        exit::NOT_DONE
    })
}

pub(crate) fn plan(engine: &Engine, args: PlanArgs) -> Outcome {
    let out = Printer::new(args.json);
    let options = PlanOptions {
        slug: args.slug,
        brief: brief(args.text),
        agent: args.agent,
        model: args.model,
        base: args.base,
        sandbox: args.sandbox,
        network: args.network,
        commander: args.as_name,
    };
    let report = engine
        .plan(options, &mut out.notices())
        .map_err(Failure::Engine)?;
    print(&report, out, "awaiting-approval")
}

pub(crate) fn approve(engine: &Engine, args: PipelineArgs) -> Outcome {
    let out = Printer::new(args.json);
    let report = engine.approve(&args.slug, args.as_name.as_deref(), &mut out.notices())?;
    print(&report, out, "done")
}

pub(crate) fn reject(engine: &Engine, args: RejectArgs) -> Outcome {
    let out = Printer::new(args.json);
    let notes = brief(args.text).ok_or_else(|| {
        EngineError::invalid("give the notes with --message TEXT or --brief FILE")
    })?;
    let report = engine.reject(
        &args.slug,
        &notes,
        args.as_name.as_deref(),
        &mut out.notices(),
    )?;
    print(&report, out, "awaiting-approval")
}

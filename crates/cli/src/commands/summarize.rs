//! `ganger summarize FILE`: a stream file's summary through the very code a live round uses
//! (the adapter's `feed`, line by line). The benchmark measures this.

use crate::Outcome;
use crate::args::SummarizeArgs;
use crate::exit;
use crate::printer::Printer;
use ganger_engine::EngineError;
use ganger_engine::documents::Summary;

pub(crate) fn run(args: SummarizeArgs) -> Outcome {
    let agent = ganger_agents::adapter(&args.agent)
        .ok_or_else(|| EngineError::invalid(format!("unknown agent {:?}", args.agent)))?;
    let cannot = |e: std::io::Error| {
        EngineError::invalid(format!("cannot read {}: {e}", args.file.display()))
    };
    let file = std::fs::File::open(&args.file).map_err(cannot)?;
    let bytes = file.metadata().map_err(cannot)?.len();
    let reader = std::io::BufReader::with_capacity(1 << 20, file);
    let summary =
        ganger_agents::summarize_reader(agent.stream_parser().as_mut(), reader).map_err(cannot)?;
    let document = Summary::new(bytes, summary);
    let summary = &document.summary;
    Printer::new(args.json).print(&document, || {
        let events: Vec<String> = summary
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        format!(
            "{}: {} bytes, {} lines ({} malformed)\nsession: {}\nevents: {}\nfinish: {}\ncost: {}, tokens {} in / {} out\nerrors: {}\n",
            args.file.display(),
            bytes,
            summary.lines,
            summary.malformed,
            summary.session.as_deref().unwrap_or("none"),
            events.join(", "),
            summary.finish.as_deref().unwrap_or("none"),
            summary
                .cost_usd
                .map_or_else(|| "not reported".into(), |c| format!("${c:.4}")),
            summary.tokens.input,
            summary.tokens.output,
            summary.error_count,
        )
    })?;
    Ok(exit::OK)
}

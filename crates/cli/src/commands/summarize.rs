//! `ganger summarize FILE`: a stream file's summary through the very code a live round uses
//! (the adapter's `feed`, line by line). The benchmark measures this.

use crate::Outcome;
use crate::args::SummarizeArgs;
use crate::exit;
use crate::printer;
use ganger_engine::EngineError;
use ganger_events::RoundSummary;

/// Summarizes `data` with `agent`'s parser, as a round host would line by line.
pub fn summarize(agent: &dyn ganger_agents::Adapter, data: &[u8]) -> RoundSummary {
    let mut parser = agent.stream_parser();
    let mut summary = RoundSummary::default();
    let mut rest = data;
    while !rest.is_empty() {
        let (line, next) = match memchr_newline(rest) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            parser.feed(line, &mut summary);
        }
    }
    summary
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

pub(crate) fn run(args: SummarizeArgs) -> Outcome {
    let agent = ganger_agents::adapter(&args.agent)
        .ok_or_else(|| EngineError::invalid(format!("unknown agent {:?}", args.agent)))?;
    let data = std::fs::read(&args.file)
        .map_err(|e| EngineError::invalid(format!("cannot read {}: {e}", args.file.display())))?;
    let summary = summarize(agent, &data);
    if args.json {
        printer::emit_json(&serde_json::json!({
            "schema": "ganger.summary/1",
            "bytes": data.len(),
            "summary": summary,
        }))?;
    } else {
        let events: Vec<String> = summary
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        printer::emit(&format!(
            "{}: {} bytes, {} lines ({} malformed)\nsession: {}\nevents: {}\nfinish: {}\ncost: {}, tokens {} in / {} out\nerrors: {}\n",
            args.file.display(),
            data.len(),
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
        ))?;
    }
    Ok(exit::OK)
}

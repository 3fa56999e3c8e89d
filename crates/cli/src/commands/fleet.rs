//! The fleet commands: `serve`, `fleet run|submit|status`, `broadcast`, and what
//! `start --queue` / `fix --queue` print. Progress is one line per event (JSON lines with
//! `--json`); on a terminal a status line of counts is kept at the bottom.

use crate::fleet_args::{
    BroadcastArgs, FleetAction, FleetArgs, LimitArgs, ServeArgs, WorkerArgs, WorkersArgs,
};
use crate::printer::{self, Printer};
use crate::{Failure, Outcome, exit};
use ganger_engine::documents::{FleetSubmitted, Queued, Workers};
use ganger_engine::fleet::{Drain, FleetEvent, FleetStatus, Limits, QueueItem, SchedulerOptions};
use ganger_engine::{Engine, EngineError};

/// Prints `ganger.queued/1` of `items`, queued for a task that holds new rounds when `held`.
pub(crate) fn print_queued(items: Vec<QueueItem>, held: bool, out: Printer) -> Outcome {
    let queued = Queued::new(items, held);
    out.print(&queued, || {
        queued
            .items
            .iter()
            .map(|item| {
                format!(
                    "queued {} {} (item {}); `ganger serve` starts it\n",
                    item.kind.as_str(),
                    item.slug,
                    item.id
                )
            })
            .collect()
    })?;
    Ok(exit::OK)
}

fn pair(text: &str, what: &str) -> Result<(String, u32), EngineError> {
    let (name, n) = text
        .rsplit_once('=')
        .ok_or_else(|| EngineError::invalid(format!("{what} {text:?}: expected NAME=N")))?;
    let n: u32 = n
        .parse()
        .map_err(|_| EngineError::invalid(format!("{what} {text:?}: N is not a number")))?;
    Ok((name.to_owned(), n))
}

fn options(args: &LimitArgs, drain: Drain) -> Result<SchedulerOptions, EngineError> {
    let mut limits = Limits {
        global: args.max,
        ..Limits::default()
    };
    for text in &args.max_agent {
        let (name, n) = pair(text, "--max-agent")?;
        limits.agents.insert(name, n);
    }
    for text in &args.max_model {
        let (name, n) = pair(text, "--max-model")?;
        limits.models.insert(name, n);
    }
    limits.check()?;
    let mut options = SchedulerOptions {
        limits,
        drain,
        ..SchedulerOptions::default()
    };
    if let Some(backoff) = args.backoff {
        options.backoff = backoff;
    }
    Ok(options)
}

/// Prints events: JSON lines, or text lines with a status line of counts kept at the bottom
/// on a terminal (the printer's).
struct Display {
    out: Printer,
    status: printer::StatusLine,
}

impl Display {
    fn new(out: Printer) -> Display {
        Display {
            out,
            status: printer::StatusLine::for_run(out),
        }
    }

    fn event(&mut self, event: FleetEvent) {
        if let FleetEvent::Counts {
            queued,
            running,
            ended,
            refused,
        } = &event
        {
            self.status.show(&format!(
                "[{queued} queued, {running} running, {ended} ended, {refused} refused]"
            ));
            return;
        }
        let text = match &event {
            // Said once the store answered and the worker is registered, never before.
            FleetEvent::Ready { .. } => format!("ganger worker: {}", describe_event(&event)),
            _ => describe_event(&event),
        };
        self.status.above(|| {
            let _ = self.out.item(&event, || format!("{text}\n"));
        });
    }

    fn finish(&mut self) {
        self.status.end();
    }
}

/// A fleet event as a line for a person.
fn describe_event(event: &FleetEvent) -> String {
    match event {
        FleetEvent::Started {
            slug,
            round,
            agent,
            model,
        } => format!(
            "started {slug} round {round} ({agent}, {})",
            model.as_deref().unwrap_or("default model")
        ),
        FleetEvent::Ended {
            slug,
            round,
            status,
            reason,
        } => match reason {
            Some(reason) => format!("{slug} round {round}: {status}: {reason}"),
            None => format!("{slug} round {round}: {status}"),
        },
        FleetEvent::Refused { slug, reason } => format!("refused {slug}: {reason}"),
        FleetEvent::Paused {
            model,
            until,
            strikes,
            reason,
        } => {
            let secs = (until - ganger_store_now()) as f64 / 1000.0;
            format!("paused {model} for {secs:.1}s (rate limit {strikes} in a row): {reason}")
        }
        FleetEvent::Requeued { slug, reason } => format!("requeued {slug}: {reason}"),
        FleetEvent::Trouble { message } => format!("trouble (carrying on): {message}"),
        FleetEvent::Held { slug, reason } => format!("held {slug}: {reason}"),
        FleetEvent::Land { base, message } => format!("land {base}: {message}"),
        FleetEvent::Ready { capacity, pid } => {
            format!("taking queued rounds, {capacity} at once (pid {pid})")
        }
        FleetEvent::Counts {
            queued,
            running,
            ended,
            refused,
        } => format!("[{queued} queued, {running} running, {ended} ended, {refused} refused]"),
    }
}

fn ganger_store_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

pub(crate) fn serve(engine: &Engine, args: ServeArgs) -> Outcome {
    let options = options(&args.limits, Drain::Forever)?;
    let out = Printer::new(args.json);
    let mut display = Display::new(out);
    let mut listen = match (args.listen, args.web) {
        (Some(listen), _) => Some(listen),
        (None, true) => Some(
            ganger_web::listen::parse_listen(ganger_web::listen::DEFAULT_LISTEN)
                .map_err(EngineError::invalid)?,
        ),
        (None, false) => None,
    };
    // Nothing is said until serve is the repository's scheduler and listens: a taken address,
    // a bad tokens.toml or another scheduler fails it first.
    let mut web = None;
    let mut metrics_at = args.metrics;
    let mut ready = |claim: &ganger_engine::metrics::ClaimKey| -> Result<(), EngineError> {
        let started = match listen.take() {
            Some(listen) => {
                let web_engine = Engine::open(
                    &engine.workspace().repo.main,
                    Some(engine.workspace().store.clone()),
                    engine.commander(),
                )?;
                Some(
                    ganger_web::start(
                        std::sync::Arc::new(web_engine),
                        &ganger_web::WebOptions { listen },
                    )
                    .map_err(EngineError::invalid)?,
                )
            }
            None => None,
        };
        let metrics = match metrics_at.take() {
            Some(address) => Some(start_metrics(engine, address, Some(claim.clone()))?),
            None => None,
        };
        let said = |text: String| {
            out.progress(&text)
                .map_err(|e| EngineError::environment("failed to write to stdout", e))
        };
        said(format!(
            "ganger serve: scheduling queued rounds (pid {})\n",
            std::process::id()
        ))?;
        if let Some(started) = &started {
            let at = match &started.address {
                ganger_web::listen::Listen::Tcp(addr) => format!("http://{addr}/"),
                unix => unix.to_string(),
            };
            // The token itself is never printed: only where it is.
            said(format!(
                "ganger serve: dashboard and API at {at} (token in {})\n",
                started.token_file.display()
            ))?;
        }
        web = started;
        if let Some(metrics) = &metrics {
            said(format!(
                "ganger serve: metrics at http://{}/metrics\n",
                metrics.address
            ))?;
        }
        Ok(())
    };
    engine.serve(options, &mut ready, &mut |e| display.event(e))?;
    drop(web);
    Ok(exit::OK)
}

pub(crate) fn worker(engine: &Engine, args: WorkerArgs) -> Outcome {
    let options = options(&args.limits, Drain::Forever)?;
    let out = Printer::new(args.json);
    let mut display = Display::new(out);
    let worker = ganger_engine::fleet::WorkerOptions {
        name: args.name,
        capacity: args.capacity,
        sandboxes: args.sandboxes,
    };
    // The metrics listen once the worker's claim is held (their health check watches it).
    let mut ready = |claim: &ganger_engine::metrics::ClaimKey| -> Result<(), EngineError> {
        if let Some(address) = args.metrics {
            let server = start_metrics(engine, address, Some(claim.clone()))?;
            out.progress(&format!(
                "ganger worker: metrics at http://{}/metrics\n",
                server.address
            ))
            .map_err(|e| EngineError::environment("failed to write to stdout", e))?;
        }
        Ok(())
    };
    engine.worker(worker, options, &mut ready, &mut |e| display.event(e))?;
    Ok(exit::OK)
}

/// Starts `--metrics` on `address` with an engine of its own; `claim` is the process's own
/// (a worker's, or serve's scheduler's). A taken or refused address is bad input.
fn start_metrics(
    engine: &Engine,
    address: std::net::SocketAddr,
    claim: Option<ganger_engine::metrics::ClaimKey>,
) -> Result<ganger_web::metrics::MetricsServer, EngineError> {
    let metrics_engine = Engine::open(
        &engine.workspace().repo.main,
        Some(engine.workspace().store.clone()),
        engine.commander(),
    )?;
    ganger_web::metrics::start(std::sync::Arc::new(metrics_engine), address, claim)
        .map_err(EngineError::invalid)
}

pub(crate) fn workers(engine: &Engine, args: WorkersArgs) -> Outcome {
    let document = Workers::new(engine.workers()?);
    Printer::new(args.json).print(&document, || workers_table(&document.workers))?;
    Ok(exit::OK)
}

/// `ganger workers` for people: one line per worker.
fn workers_table(workers: &[ganger_engine::fleet::WorkerStatus]) -> String {
    if workers.is_empty() {
        return "no workers recorded; start one with `ganger worker`\n".into();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        });
    let mut text = format!(
        "{:<16} {:<16} {:>8} {:>5} {:<6} {:>8}  {:<18}  {}\n",
        "NAME", "HOST", "PID", "LOAD", "STATE", "SEEN", "SANDBOXES", "AGENTS"
    );
    for worker in workers {
        let record = &worker.record;
        let agents: Vec<String> = record
            .agents
            .iter()
            .map(|agent| match &agent.version {
                Some(version) => format!("{} {version}", agent.name),
                None => agent.name.clone(),
            })
            .collect();
        text.push_str(&format!(
            "{:<16} {:<16} {:>8} {:>5} {:<6} {:>8}  {:<18}  {}\n",
            record.name,
            record.host,
            record.pid,
            // A dead worker runs nothing.
            match worker.alive {
                true => format!("{}/{}", record.load, record.capacity),
                false => format!("-/{}", record.capacity),
            },
            if worker.alive { "alive" } else { "dead" },
            format!("{}s ago", (now - record.seen_at).max(0) / 1000),
            record
                .sandboxes
                .iter()
                .map(|kind| kind.as_str())
                .collect::<Vec<_>>()
                .join(","),
            agents.join(", ")
        ));
    }
    text
}

pub(crate) fn fleet(engine: &Engine, args: FleetArgs) -> Outcome {
    match args.action {
        FleetAction::Submit {
            file,
            as_name,
            json,
        } => {
            let fleet = ganger_engine::fleet::read_fleet(&file)?;
            let submitted = engine.submit_fleet(&fleet, as_name.as_deref())?;
            let document = FleetSubmitted::new(&fleet.name, submitted);
            Printer::new(json).print(&document, || {
                let mut text = document.line();
                let worker_alive = engine
                    .workers()
                    .is_ok_and(|workers| workers.iter().any(|w| w.alive));
                if engine.scheduler().is_none() && !worker_alive {
                    text.push_str(
                        "no `ganger serve` or `ganger worker` runs for this store yet; start one\n",
                    );
                }
                text
            })?;
            Ok(exit::OK)
        }
        FleetAction::Status { name, json } => {
            let status = engine.fleet_status(name.as_deref())?;
            Printer::new(json).print(&status, || format!("{}\n", status_text(&status)))?;
            Ok(exit::OK)
        }
        FleetAction::Run {
            file,
            limits,
            as_name,
            json,
        } => {
            let fleet = ganger_engine::fleet::read_fleet(&file)?;
            let options = options(&limits, Drain::Fleet(fleet.name.clone()))?;
            let out = Printer::new(json);
            let mut display = Display::new(out);
            let mut told = |submitted: &ganger_engine::fleet::Submitted, follows: Option<u32>| {
                // Tasks queued or running already (by an earlier or a concurrent run).
                let pending = match submitted.pending.len() {
                    0 => String::new(),
                    n => format!(", {n} queued or running already"),
                };
                let line = format!(
                    "fleet {}: {} to start, {} to continue, {} finished already{pending}",
                    fleet.name,
                    submitted.started.len(),
                    submitted.resumed.len(),
                    submitted.finished.len()
                );
                let _ = out.progress(&format!("{line}\n"));
                if let Some(pid) = follows {
                    let _ = out.progress(&format!(
                        "a scheduler runs for this repository (pid {pid}); following the fleet\n"
                    ));
                }
            };
            let run = {
                let mut events = |e| display.event(e);
                engine.run_fleet(&fleet, options, as_name.as_deref(), &mut told, &mut events)?
            };
            if let Some(drained) = &run.drained {
                let mut line = serde_json::to_value(drained).unwrap_or_default();
                line["event"] = "drained".into();
                // The drained line is for programs; a person reads the table below.
                out.item(&line, String::new)?;
            }
            display.finish();
            out.print(&run.status, || format!("{}\n", status_text(&run.status)))?;
            let all_done = run.all_done();
            Ok(if all_done { exit::OK } else { exit::NOT_DONE })
        }
    }
}

fn status_text(status: &FleetStatus) -> String {
    let mut out = String::new();
    let width = status
        .tasks
        .iter()
        .map(|t| t.slug.len())
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&format!(
        "{:width$}  {:10}  {:6}  {:11}  result\n",
        "task", "queue", "rounds", "last"
    ));
    for task in &status.tasks {
        // The worker's DONE: line when it gave one, else why the item ended as it did, or
        // why a queued one is held.
        let result = match (&task.done, &task.reason, &task.waits) {
            (Some(done), _, _) => done.as_str(),
            (None, Some(reason), _) if reason != "done" => reason.as_str(),
            (None, _, Some(waits)) => waits.as_str(),
            _ => "",
        };
        out.push_str(&format!(
            "{:width$}  {:10}  {:6}  {:11}  {result}\n",
            task.slug,
            task.queue,
            task.rounds,
            task.last_status.as_deref().unwrap_or("-"),
        ));
    }
    for pause in &status.paused {
        out.push_str(&format!(
            "model {} paused ({} rate limits in a row): {}\n",
            pause.model,
            pause.strikes,
            pause.reason.as_deref().unwrap_or("")
        ));
    }
    match status.scheduler {
        Some(pid) => out.push_str(&format!("scheduler: pid {pid}\n")),
        None => out.push_str("scheduler: none runs (`ganger serve`)\n"),
    }
    out.trim_end().to_owned()
}

pub(crate) fn broadcast(engine: &Engine, args: BroadcastArgs) -> Outcome {
    let brief = super::round::brief(args.text)
        .ok_or_else(|| EngineError::invalid("give the text with --brief FILE or --message TEXT"))?;
    let prompt = ganger_engine::read_brief(&brief).map_err(Failure::Engine)?;
    let items = engine.broadcast(&prompt, &args.only, args.as_name.as_deref())?;
    print_queued(items, false, Printer::new(args.json))
}

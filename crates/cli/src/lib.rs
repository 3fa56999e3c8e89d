//! The `ganger` command line: parses arguments (`args.rs`), runs the engine's commands
//! (`commands/`), prints through one printer (`printer/`), and maps outcomes to the documented
//! exit codes (`exit.rs`).

mod args;
mod commands;
mod exit;
mod fleet_args;
mod land_args;
mod mcp_args;
mod printer;
mod race_args;
mod trees_args;

use args::{Cli, Command};
use clap::Parser;
use ganger_engine::{Engine, EngineError, StoreLocation, Workspace};
use std::process::ExitCode;

/// Why a command did not complete.
#[derive(Debug)]
pub(crate) enum Failure {
    Engine(EngineError),
    Io(std::io::Error),
}

impl From<EngineError> for Failure {
    fn from(error: EngineError) -> Self {
        Failure::Engine(error)
    }
}

impl From<std::io::Error> for Failure {
    fn from(error: std::io::Error) -> Self {
        Failure::Io(error)
    }
}

pub(crate) type Outcome = Result<u8, Failure>;

/// Runs ganger with the process's arguments.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return argument_error(&error),
    };
    let json = cli.json;
    if json && let Some(name) = without_json(&cli.command) {
        let message = format!("unexpected argument '--json': `ganger {name}` has no JSON output");
        printer::emit_error(json, &message, Some("see `ganger --help`"), exit::INVALID);
        return ExitCode::from(exit::INVALID);
    }
    if let Some(store) = &cli.store
        && let Err(error) = ganger_engine::store_location::parse("--store", store)
    {
        printer::emit_error(json, &error.message, None, exit::INVALID);
        return ExitCode::from(exit::INVALID);
    }
    // An empty GANGER_COMMANDER is unset; any other value must be a name.
    if let Some(name) = std::env::var_os("GANGER_COMMANDER")
        && !name.to_string_lossy().trim().is_empty()
        && let Err(why) = ganger_engine::check_commander_name(&name.to_string_lossy())
    {
        printer::emit_error(
            json,
            &format!("GANGER_COMMANDER: {why}"),
            None,
            exit::INVALID,
        );
        return ExitCode::from(exit::INVALID);
    }
    // SAFETY: the first thing `main` does after reading its arguments: no other thread runs.
    unsafe { ganger_engine::store_location::withhold_store_secrets(cli.store.is_some()) };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(Failure::Io(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::from(exit::OK)
        }
        Err(Failure::Io(error)) => {
            printer::emit_error(
                json,
                &format!("failed to write the output: {error}"),
                None,
                exit::ENVIRONMENT,
            );
            ExitCode::from(exit::ENVIRONMENT)
        }
        Err(Failure::Engine(error)) => {
            let document = ganger_engine::ErrorDocument::from(&error);
            printer::emit_failure(json, &document);
            ExitCode::from(document.exit_code)
        }
    }
}

/// Help and version print as clap makes them; any other argument error is one line, exit 2.
fn argument_error(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind as Kind;
    if matches!(
        error.kind(),
        Kind::DisplayHelp | Kind::DisplayVersion | Kind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = error.print();
        return ExitCode::from(
            if error.kind() == Kind::DisplayHelpOnMissingArgumentOrSubcommand {
                exit::INVALID
            } else {
                exit::OK
            },
        );
    }
    let rendered = error.render().to_string();
    // clap's message is the first paragraph (a list of missing arguments runs over lines);
    // usage and tips follow. Keep the message, as one line.
    let message: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .skip_while(|line| line.is_empty())
        .take_while(|line| !line.is_empty())
        .collect();
    let first = match message.join(" ").trim_start_matches("error: ") {
        "" => "bad arguments".to_owned(),
        text => text.to_owned(),
    };
    let json = std::env::args().any(|a| a == "--json");
    printer::emit_error(json, &first, Some("see `ganger --help`"), exit::INVALID);
    ExitCode::from(exit::INVALID)
}

/// The name of a command that has no JSON output, which refuses the global `--json` (clap
/// takes it anywhere); `None` for a command that prints JSON with it.
fn without_json(command: &Command) -> Option<&'static str> {
    Some(match command {
        Command::Diff(_) => "diff",
        Command::FakeLlm(_) => "fake-llm",
        Command::Demo(_) => "demo",
        Command::Completions(_) => "completions",
        Command::Man => "man",
        Command::Mcp(_) => "mcp",
        Command::Host(_) => "host",
        Command::RaceHost(_) => "race-host",
        Command::WarmHost(_) => "warm-host",
        Command::Attach(_) => "attach",
        Command::DockerRound => "docker-round",
        Command::GatewayRelay(_) => "gateway-relay",
        // Every other command prints JSON with it (listed, so that a new one must choose).
        Command::Init(_)
        | Command::Start(_)
        | Command::Fix(_)
        | Command::Status(_)
        | Command::Plan(_)
        | Command::Race(_)
        | Command::Approve(_)
        | Command::Reject(_)
        | Command::Wait(_)
        | Command::Cancel(_)
        | Command::Log(_)
        | Command::Watch(_)
        | Command::Ack(_)
        | Command::Clean(_)
        | Command::Rewind(_)
        | Command::Merge(_)
        | Command::Land(_)
        | Command::Summarize(_)
        | Command::Assign(_)
        | Command::Adopt(_)
        | Command::Transfer(_)
        | Command::Release(_)
        | Command::Policy(_)
        | Command::Allow(_)
        | Command::Agents(_)
        | Command::Image(_)
        | Command::Serve(_)
        | Command::Worker(_)
        | Command::Workers(_)
        | Command::Broadcast(_)
        | Command::Warm(_)
        | Command::Trees(_)
        | Command::Checkout(_)
        | Command::Fleet(_) => return None,
    })
}

/// Where a command works: the directory it was started in (`-C`), and the store the user
/// named on the command line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place<'a> {
    pub(crate) dir: Option<&'a std::path::Path>,
    /// `--store` (checked already in `main`).
    store: Option<&'a str>,
}

impl Place<'_> {
    /// The store the user named: `--store`, else `GANGER_STORE` (read here, at the edge);
    /// `None` leaves it to the configuration's `[store] url`, else the local store.
    pub(crate) fn named_store(&self) -> Result<Option<StoreLocation>, EngineError> {
        ganger_engine::store_location::accept_handed_password()?;
        let env = std::env::var_os(ganger_engine::STORE_ENV);
        ganger_engine::store_location::named(self.store, env.as_deref())
    }
}

fn here(cli_dir: Option<&std::path::Path>) -> Result<std::path::PathBuf, Failure> {
    Ok(match cli_dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| EngineError::environment("there is no current directory", e))?,
    })
}

fn workspace(place: &Place) -> Result<Workspace, Failure> {
    Ok(Workspace::discover(
        &here(place.dir)?,
        place.named_store()?,
    )?)
}

/// The engine for this run: the repository, and the commander who acts unless a command
/// names one (`GANGER_COMMANDER`, else the user name; `--as` is per command).
fn engine(place: &Place) -> Result<Engine, Failure> {
    Ok(Engine::open(
        &here(place.dir)?,
        place.named_store()?,
        &ganger_engine::commander(None),
    )?)
}

fn run(cli: Cli) -> Outcome {
    let dir = &Place {
        dir: cli.directory.as_deref(),
        store: cli.store.as_deref(),
    };
    match cli.command {
        Command::Init(args) => commands::init::run(&engine(dir)?, &args),
        Command::Start(args) => commands::round::start(&engine(dir)?, *args),
        Command::Fix(args) => commands::round::fix(&engine(dir)?, args),
        Command::Status(args) => commands::watch::status(&engine(dir)?, args),
        Command::Plan(args) => commands::pipeline::plan(&engine(dir)?, args),
        Command::Race(args) => commands::race::run(&engine(dir)?, *args),
        Command::RaceHost(args) => commands::race::host(&engine(dir)?, &args.slug),
        Command::Approve(args) => commands::pipeline::approve(&engine(dir)?, args),
        Command::Reject(args) => commands::pipeline::reject(&engine(dir)?, args),
        Command::Wait(args) => commands::watch::wait(&engine(dir)?, args),
        Command::Cancel(args) => commands::watch::cancel(&engine(dir)?, args),
        Command::Log(args) => commands::log::run(&engine(dir)?, args),
        Command::Watch(args) => commands::journal::watch(&engine(dir)?, args),
        Command::Ack(args) => commands::journal::ack(&engine(dir)?, args),
        Command::Diff(args) => commands::watch::diff(&engine(dir)?, args),
        Command::Clean(args) => commands::clean::run(&engine(dir)?, args),
        Command::Rewind(args) => commands::merge::rewind(&engine(dir)?, args),
        Command::Merge(args) => commands::merge::merge(&engine(dir)?, args),
        Command::Land(args) => commands::land::run(&engine(dir)?, args),
        Command::Summarize(args) => commands::summarize::run(args),
        Command::Attach(args) => commands::ownership::attach(&engine(dir)?, args),
        Command::Adopt(args) => commands::ownership::adopt(&engine(dir)?, args),
        Command::Assign(args) => commands::ownership::assign(&engine(dir)?, args),
        Command::Transfer(args) => commands::ownership::transfer(&engine(dir)?, args),
        Command::Release(args) => commands::ownership::release(&engine(dir)?, args),
        Command::Policy(args) => commands::ownership::policy(&engine(dir)?, args),
        Command::Allow(args) => commands::ownership::allow(&engine(dir)?, args),
        Command::FakeLlm(args) => commands::fake_llm::run(args),
        Command::Agents(args) => commands::agents::run(dir, args),
        Command::Image(args) => commands::image::run(dir, args),
        Command::Demo(args) => commands::demo::run(args),
        Command::Serve(args) => commands::fleet::serve(&engine(dir)?, args),
        Command::Worker(args) => commands::fleet::worker(&engine(dir)?, args),
        Command::Workers(args) => commands::fleet::workers(&engine(dir)?, args),
        Command::Fleet(args) => commands::fleet::fleet(&engine(dir)?, args),
        Command::Broadcast(args) => commands::fleet::broadcast(&engine(dir)?, args),
        Command::Completions(args) => commands::reference::completions(args),
        Command::Man => commands::reference::man(),
        Command::Mcp(args) => commands::mcp::run(dir, args),
        Command::Host(args) => commands::host::run(&workspace(dir)?, args),
        Command::WarmHost(args) => commands::warm::host(&workspace(dir)?, args),
        Command::Warm(args) => commands::warm::run(&engine(dir)?, args),
        Command::Trees(args) => commands::trees::run(&engine(dir)?, args),
        Command::Checkout(args) => commands::trees::checkout(&engine(dir)?, args),
        Command::DockerRound => Ok(u8::try_from(ganger_engine::run_docker_round()).unwrap_or(125)),
        Command::GatewayRelay(args) => {
            let (program, rest) = args.command.split_first().ok_or_else(|| {
                ganger_engine::EngineError::invalid("gateway-relay needs a program after --")
            })?;
            let status = ganger_engine::run_gateway_relay(args.port, &args.socket, program, rest);
            Ok(u8::try_from(status.clamp(0, 255)).unwrap_or(125))
        }
    }
}

//! `ganger agents`: the known agent CLIs and what is installed (`list`), the tested versions
//! installed with npm into ganger's cache (`install`), a check of each against the scripted
//! model (`doctor`, in its own module), and the conformance suite on each agent's newest
//! release (`canary`: it runs the developer tool `ganger-dev canary`).

use crate::args::{AgentsAction, AgentsArgs};
use crate::exit;
use crate::printer::Printer;
use crate::{Failure, Outcome, Place};
use ganger_engine::agents::{AgentFound, Source};
use ganger_engine::config::Config;
use ganger_engine::documents::{AgentList, AgentsInstall, InstalledAgent};
use ganger_engine::{EngineError, Workspace};

/// The configuration in effect here: the repository's and the user's inside a repository,
/// else the user's alone.
pub(crate) fn config_here(place: &Place) -> Result<Config, Failure> {
    let dir = match place.dir {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| EngineError::invalid(format!("no current directory: {e}")))?,
    };
    match place
        .named_store()
        .and_then(|named| Workspace::discover(&dir, named))
    {
        Ok(ws) => Ok(ws.config),
        Err(_) => Ok(Config::load(&dir).unwrap_or_default()),
    }
}

/// One line about an agent, as `init` and `agents` print it.
pub(crate) fn describe(agent: &AgentFound) -> String {
    let found = match (&agent.path, &agent.version) {
        (Some(path), Some(version)) => {
            let tested = if agent.tested {
                "the tested version".to_owned()
            } else {
                format!("UNTESTED: ganger is tested with {}", agent.tested_version)
            };
            let from = match agent.source {
                Some(Source::Configured) => ", from ganger.toml",
                Some(Source::Cache) => ", from ganger's cache",
                _ => "",
            };
            format!("{version} at {} ({tested}{from})", path.display())
        }
        (Some(path), None) => format!("at {} (its version could not be read)", path.display()),
        (None, _) => format!(
            "not installed (ganger agents install {} installs {}@{})",
            agent.name, agent.package, agent.tested_version
        ),
    };
    format!("{:<9} {:<12} {found}", agent.name, agent.display_name)
}

/// The adapters named, `all` meaning every one; an unknown name is an error naming it.
pub(crate) fn chosen(
    names: &[String],
) -> Result<Vec<&'static dyn ganger_agents::Adapter>, Failure> {
    let all = ganger_agents::adapters();
    if names.is_empty() || names.iter().any(|n| n == "all") {
        return Ok(all.to_vec());
    }
    names
        .iter()
        .map(|name| {
            ganger_agents::adapter(name)
                .filter(|adapter| all.iter().any(|a| a.name() == adapter.name()))
                .ok_or_else(|| {
                    let known: Vec<&str> = all.iter().map(|a| a.name()).collect();
                    Failure::Engine(EngineError::invalid(format!(
                        "unknown agent {name:?}; known agents: {}",
                        known.join(", ")
                    )))
                })
        })
        .collect()
}

pub(crate) fn run(place: &Place, args: AgentsArgs) -> Outcome {
    match args.action.unwrap_or(AgentsAction::List) {
        AgentsAction::List => list(place, args.json),
        AgentsAction::Install { names } => install(&names, args.json),
        AgentsAction::Doctor { names } => super::doctor::run(place, &names, args.json),
        AgentsAction::Canary { names, suite, jobs } => {
            super::canary::run(place.dir, &names, suite.as_deref(), jobs, args.json)
        }
    }
}

fn list(place: &Place, json: bool) -> Outcome {
    let config = config_here(place)?;
    let agents = ganger_engine::agents::find_all(&config);
    let text: String = agents
        .iter()
        .map(|a| format!("{}\n", describe(a)))
        .collect();
    Printer::new(json).print(&AgentList::new(agents), || text)?;
    Ok(exit::OK)
}

fn install(names: &[String], json: bool) -> Outcome {
    let out = Printer::new(json);
    let adapters = chosen(names)?;
    let mut installed = Vec::new();
    for adapter in adapters {
        {
            out.progress(&format!(
                "{}@{} into {} ...\n",
                adapter.npm_package(),
                adapter.tested_version(),
                ganger_engine::install::cached_install_dir(adapter).display()
            ))?;
        }
        let path = ganger_engine::install::ensure_installed(adapter)?;
        let version = ganger_engine::agents::version_of(adapter, &path).unwrap_or_default();
        if version != adapter.tested_version() {
            return Err(Failure::Engine(EngineError::invalid(format!(
                "{} at {} reports version {version:?}, not {}",
                adapter.display_name(),
                path.display(),
                adapter.tested_version()
            ))));
        }
        {
            out.progress(&format!(
                "{} {version} at {}\n",
                adapter.name(),
                path.display()
            ))?;
        }
        installed.push(InstalledAgent {
            name: adapter.name().into(),
            package: adapter.npm_package().into(),
            version,
            path,
        });
    }
    // The lines above were the human report.
    out.print(&AgentsInstall::new(installed), String::new)?;
    Ok(exit::OK)
}

//! The agent CLIs ganger knows: which is installed where, at which version, and whether that
//! is the version ganger is tested with (`ganger agents`, `ganger init`, and the warning a
//! round gives when it runs an untested version).

use crate::config::Config;
use crate::install;
use ganger_agents::Adapter;
use ganger_sandbox::{AgentCommand, run_captured};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where an agent's program was found.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `[agents.NAME] command` in `ganger.toml`.
    Configured,
    /// On `PATH`.
    Path,
    /// In ganger's cache (`ganger agents install`).
    Cache,
}

/// What ganger found of one agent CLI.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AgentFound {
    pub name: String,
    pub display_name: String,
    pub package: String,
    pub tested_version: String,
    /// Whether ganger can drive it (every listed agent has an adapter).
    pub supported: bool,
    pub path: Option<PathBuf>,
    pub source: Option<Source>,
    /// The version it reports, when it could be run.
    pub version: Option<String>,
    /// Whether that version is the tested one.
    pub tested: bool,
}

/// The program ganger would run for `adapter`, and where it was found, in the order rounds
/// use: `ganger.toml`, ganger's cache, `PATH`.
pub fn locate(adapter: &dyn Adapter, config: &Config) -> Option<(PathBuf, Source)> {
    if let Some(command) = config.agent(adapter.name()).command {
        return Some((command, Source::Configured));
    }
    if let Some(cached) = install::cached_program(adapter) {
        return Some((cached, Source::Cache));
    }
    crate::agent_env::find_executable(Path::new(adapter.program()))
        .map(|found| (found, Source::Path))
}

/// Runs the program's version command and reads the version out of it.
pub fn version_of(adapter: &dyn Adapter, program: &Path) -> Option<String> {
    let captured = run_captured(
        &AgentCommand {
            program: program.to_path_buf(),
            args: adapter.version_args().iter().map(Into::into).collect(),
            env: std::env::vars_os().collect(),
            cwd: std::env::temp_dir(),
            stdin: None,
            // Unique per run: leftovers are found by this token, and versions are read in
            // parallel, so a shared one would let one run's clean-up kill another's CLI.
            token: format!("version-{}", crate::tokens::new_token()),
            use_cgroup: false,
        },
        Duration::from_secs(30),
    )
    .ok()?;
    adapter.parse_version(&String::from_utf8_lossy(&captured.stdout))
}

/// Every known agent CLI, looked up in parallel (a version command can take a second).
pub fn find_all(config: &Config) -> Vec<AgentFound> {
    let handles: Vec<_> = ganger_agents::adapters()
        .iter()
        .map(|adapter| {
            let adapter: &'static dyn Adapter = *adapter;
            let located = locate(adapter, config);
            std::thread::spawn(move || {
                let version = located
                    .as_ref()
                    .and_then(|(path, _)| version_of(adapter, path));
                AgentFound {
                    name: adapter.name().into(),
                    display_name: adapter.display_name().into(),
                    package: adapter.npm_package().into(),
                    tested_version: adapter.tested_version().into(),
                    supported: true,
                    tested: version.as_deref() == Some(adapter.tested_version()),
                    path: located.as_ref().map(|(path, _)| path.clone()),
                    source: located.map(|(_, source)| source),
                    version,
                }
            })
        })
        .collect();
    handles.into_iter().filter_map(|h| h.join().ok()).collect()
}

/// The version of `program`, cached in `cache_dir` by the program's path, size and change
/// time, so that a round pays for running `--version` only after the CLI changed.
pub fn cached_version(adapter: &dyn Adapter, program: &Path, cache_dir: &Path) -> Option<String> {
    use std::hash::{Hash, Hasher};
    let resolved = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let meta = std::fs::metadata(&resolved).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    resolved.hash(&mut hasher);
    meta.len().hash(&mut hasher);
    std::os::unix::fs::MetadataExt::ctime(&meta).hash(&mut hasher);
    std::os::unix::fs::MetadataExt::ctime_nsec(&meta).hash(&mut hasher);
    let file = cache_dir.join(format!(
        "version-{}-{:016x}",
        adapter.name(),
        hasher.finish()
    ));
    if let Ok(text) = std::fs::read_to_string(&file) {
        return Some(text.trim().to_owned()).filter(|v| !v.is_empty());
    }
    let version = version_of(adapter, program)?;
    if std::fs::create_dir_all(cache_dir).is_ok() {
        let _ = std::fs::write(&file, &version);
    }
    Some(version)
}

//! The agent CLIs ganger knows: which is installed where, at which version, and whether that
//! is the version ganger is tested with (`ganger agents`, `ganger init`, and the warning a
//! round gives when it runs an untested version).

use crate::base::config::Config;
use crate::base::install;
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
    crate::env::agent_env::find_executable(Path::new(adapter.program()))
        .map(|found| (found, Source::Path))
}

/// Runs the program's version command and reads the version out of it.
pub fn version_of(adapter: &dyn Adapter, program: &Path) -> Option<String> {
    let captured = run_captured(
        &AgentCommand {
            program: program.to_path_buf(),
            args: adapter.version_args().iter().map(Into::into).collect(),
            env: crate::env::agent_env::user_environment(),
            cwd: std::env::temp_dir(),
            stdin: None,
            // Unique per run: leftovers are found by this token, and versions are read in
            // parallel, so a shared one would let one run's clean-up kill another's CLI.
            token: format!("version-{}", crate::base::tokens::new_token()),
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

/// The version of `program`: read from the manifest of the npm package it was installed from
/// when it is one (a version command can cost a Node CLI 1.6 CPU-seconds), else its
/// version command's, cached in `cache_dir` by the program's path, size and change time, so
/// that a round pays for running it only after the CLI changed.
pub fn cached_version(adapter: &dyn Adapter, program: &Path, cache_dir: &Path) -> Option<String> {
    use std::hash::{Hash, Hasher};
    // Its links followed once, for both questions.
    let resolved = std::fs::canonicalize(program).ok();
    if let Some(version) = resolved
        .as_deref()
        .and_then(|resolved| npm_installed_version(adapter.npm_package(), resolved))
    {
        return Some(version);
    }
    let resolved = resolved.unwrap_or_else(|| program.to_path_buf());
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

/// The `version` in the `package.json` of the npm package `package` when `resolved` (a
/// program with its symbolic links followed) lies inside that package's folder (as
/// `node_modules/.bin/NAME` and a global install's `bin/NAME` do); `None` for anything else (a
/// wrapper script, a binary of its own, another package's file), which is then asked for its
/// version.
fn npm_installed_version(package: &str, resolved: &Path) -> Option<String> {
    if package.is_empty() {
        return None;
    }
    for dir in resolved.ancestors().skip(1) {
        if dir.file_name().is_some_and(|name| name == "node_modules") {
            return None;
        }
        let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
            continue;
        };
        let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
        // A nested `package.json` without a name (`{"type": "module"}`) is not the package's.
        match manifest.get("name").and_then(serde_json::Value::as_str) {
            None => continue,
            Some(name) if name == package => {
                return manifest
                    .get("version")
                    .and_then(serde_json::Value::as_str)
                    .filter(|version| !version.is_empty())
                    .map(str::to_owned);
            }
            Some(_) => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::npm_installed_version;
    use std::fs;
    use std::path::Path;

    fn file(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    #[test]
    fn an_npm_installed_cli_has_its_packages_version_through_the_bin_link() {
        let dir = tempfile::tempdir().unwrap();
        let modules = dir.path().join("node_modules");
        let package = modules.join("@scope/cli");
        file(
            &package.join("package.json"),
            r#"{"name": "@scope/cli", "version": "1.2.3"}"#,
        );
        file(&package.join("dist/package.json"), r#"{"type": "module"}"#);
        file(&package.join("dist/cli.js"), "");
        fs::create_dir_all(modules.join(".bin")).unwrap();
        std::os::unix::fs::symlink("../@scope/cli/dist/cli.js", modules.join(".bin/cli")).unwrap();
        let bin = modules.join(".bin/cli").canonicalize().unwrap();
        assert_eq!(
            npm_installed_version("@scope/cli", &bin).as_deref(),
            Some("1.2.3")
        );
        // Another package's program, or a program outside any package, is asked instead.
        assert_eq!(npm_installed_version("other", &bin), None);
        file(&dir.path().join("wrapper"), "#!/bin/sh\n");
        assert_eq!(
            npm_installed_version("@scope/cli", &dir.path().join("wrapper")),
            None
        );
        assert_eq!(npm_installed_version("", &bin), None);
    }
}

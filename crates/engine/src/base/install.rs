//! The pinned agent CLIs in ganger's cache: `~/.cache/ganger/agents/NAME-VERSION/`, installed
//! with npm on request (`ganger demo` does, so that a fresh machine needs no set-up). ganger
//! uses an agent found this way when the user has none on `PATH`.

use crate::base::error::{EngineError, Result};
use ganger_agents::Adapter;
use std::path::{Path, PathBuf};
use std::process::Command;

/// ganger's cache directory.
pub fn cache_root() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("ganger")
}

/// Where the tested version of `adapter` is (or would be) installed.
pub fn cached_install_dir(adapter: &dyn Adapter) -> PathBuf {
    cache_root()
        .join("agents")
        .join(format!("{}-{}", adapter.name(), adapter.tested_version()))
}

/// The program of the cached install, if it is there.
pub fn cached_program(adapter: &dyn Adapter) -> Option<PathBuf> {
    let program = cached_install_dir(adapter)
        .join("node_modules")
        .join(".bin")
        .join(adapter.program());
    program.is_file().then_some(program)
}

/// Installs the tested version of `adapter` into the cache with npm unless it is there.
/// Returns the program.
pub fn ensure_installed(adapter: &dyn Adapter) -> Result<PathBuf> {
    if let Some(program) = cached_program(adapter) {
        return Ok(program);
    }
    npm_install(
        adapter,
        adapter.tested_version(),
        &cached_install_dir(adapter),
    )
}

/// Installs `version` of `adapter`'s npm package into `dir` (its own `node_modules`) with
/// npm, and returns the program it provides.
pub fn npm_install(adapter: &dyn Adapter, version: &str, dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
    let package = format!("{}@{version}", adapter.npm_package());
    let output = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(dir)
        .arg(&package)
        .output()
        .map_err(|e| {
            EngineError::environment(format!("failed to run npm to install {package}"), e)
                .hint("install Node.js 20 and npm, or install the agent yourself")
        })?;
    if !output.status.success() {
        return Err(EngineError::invalid(format!(
            "npm could not install {package}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let program = dir
        .join("node_modules")
        .join(".bin")
        .join(adapter.program());
    if !program.is_file() {
        return Err(EngineError::invalid(format!(
            "npm installed {package} but {} has no {}",
            dir.display(),
            adapter.program()
        )));
    }
    Ok(program)
}

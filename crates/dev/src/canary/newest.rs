//! The newest published version of an agent (`npm view PACKAGE version`, the `latest` tag),
//! and the canary's scratch installs: `canary/NAME-VERSION/`, beside ganger's cache of pinned
//! agents (`agents/NAME-VERSION/`) and never in it.

use super::CanaryNotice;
use ganger_agents::Adapter;
use ganger_engine::{EngineError, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The version npm's `latest` tag names for `adapter`'s package.
pub fn newest_version(adapter: &dyn Adapter) -> Result<String> {
    let package = adapter.npm_package();
    let output = Command::new("npm")
        .args(["view", package, "version"])
        .output()
        .map_err(|e| {
            EngineError::environment(format!("failed to run npm to look up {package}"), e)
                .hint("the canary needs Node.js 20 and npm, and the npm registry")
        })?;
    if !output.status.success() {
        return Err(EngineError::invalid(format!(
            "npm could not look up {package}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let version = stdout.trim();
    if !is_version(version) {
        return Err(EngineError::invalid(format!(
            "npm named no version for {package}: {version:?}"
        )));
    }
    Ok(version.to_owned())
}

/// Whether `text` looks like a published version (`2.1.332`, `1.0.0-beta.2`).
fn is_version(text: &str) -> bool {
    let core = text.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

/// `version` of `adapter` in the scratch cache under `root`, installed with npm unless it is
/// there already; the program, checked to report that version.
pub fn scratch_install(
    adapter: &dyn Adapter,
    version: &str,
    root: &Path,
    notify: &(dyn Fn(CanaryNotice) + Sync),
) -> Result<PathBuf> {
    let dir = root.join(format!("{}-{version}", adapter.name()));
    let program = dir
        .join("node_modules")
        .join(".bin")
        .join(adapter.program());
    let installed = program.is_file()
        && ganger_engine::agents::version_of(adapter, &program).as_deref() == Some(version);
    if !installed {
        notify(CanaryNotice::Installing {
            agent: adapter.name().into(),
            version: version.into(),
        });
        ganger_engine::install::npm_install(adapter, version, &dir)?;
    }
    let reported = ganger_engine::agents::version_of(adapter, &program);
    if reported.as_deref() != Some(version) {
        return Err(EngineError::invalid(format!(
            "{} at {} reports version {}, not {version}",
            adapter.display_name(),
            program.display(),
            reported.as_deref().unwrap_or("(none)")
        )));
    }
    Ok(program)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_three_numbers_with_an_optional_tag() {
        for good in ["2.1.332", "0.24.4", "1.0.0-beta.2", "1.2.3+build.5"] {
            assert!(is_version(good), "{good}");
        }
        for bad in [
            "",
            "2.1",
            "v2.1.3",
            "2.1.x",
            "npm ERR! 404",
            "1.2.3 4.5.6",
            "1..3",
        ] {
            assert!(!is_version(bad), "{bad}");
        }
    }
}

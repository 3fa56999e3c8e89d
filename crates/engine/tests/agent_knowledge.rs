//! What differs between agents is asked of their adapters (`crates/agents`: each agent's facts
//! and capabilities in its folder), and what differs between sandboxes of the sandbox trait
//! (`ganger_sandbox::Sandbox`), so that an engine file never names an agent and never matches
//! a sandbox kind outside the one place that chooses a sandbox. This test reads every source
//! file of the engine and fails on:
//!
//! - the name, display name or program of an agent ganger installs, in any case, as the
//!   agents crate gives them (so that a new agent is covered too);
//! - for every agent, the one configured by a command template included (whose name is an
//!   ordinary word): a path into its folder of the agents crate (`NAME::`) and a comparison
//!   with its name (`== "NAME"`, `"NAME" =>`);
//! - a sandbox kind matched or compared (`SandboxKind::Docker =>`, `== SandboxKind::Local`,
//!   `== "local"`) anywhere but `src/env/sandboxing/mod.rs`, which turns a kind into its sandbox.
//!
//! Nothing is allowed anywhere else.
#![cfg(test)]

use std::path::{Path, PathBuf};

/// The one file that turns a sandbox kind into its sandbox.
const SANDBOX_CHOOSER: &str = "src/env/sandboxing/mod.rs";

/// Every `.rs` file under `dir`, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Each engine source file, relative to the crate, with its text.
fn engine_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<(String, String)> = sources(&root.join("src"))
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            (relative, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    assert!(files.len() > 50, "the engine's sources were not found");
    files
}

/// `file:line: text` for every line of every file where `hit` finds something.
fn hits(files: &[(String, String)], hit: impl Fn(&str, &str) -> bool) -> Vec<String> {
    files
        .iter()
        .flat_map(|(file, text)| {
            text.lines()
                .enumerate()
                .filter(|(_, line)| hit(file, line))
                .map(move |(number, line)| format!("{file}:{}: {}", number + 1, line.trim()))
        })
        .collect()
}

/// Whether `line` reaches into the agent `name`'s folder of the agents crate or compares a
/// value with its name.
fn names_agent_in_code(line: &str, name: &str) -> bool {
    let path = format!("{name}::");
    let into_folder = line.match_indices(&path).any(|(at, _)| {
        !line[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    let quoted = format!("\"{name}\"");
    into_folder
        || line.contains(&format!("== {quoted}"))
        || line.contains(&format!("!= {quoted}"))
        || line.contains(&format!("{quoted} =>"))
}

/// The names, display names and programs of the agents ganger installs, in lower case.
fn installed_names() -> Vec<String> {
    ganger_agents::adapters()
        .iter()
        .flat_map(|adapter| [adapter.name(), adapter.display_name(), adapter.program()])
        .map(str::to_lowercase)
        .collect()
}

/// Whether `line` names an agent.
fn names_an_agent(line: &str) -> bool {
    let lower = line.to_lowercase();
    installed_names()
        .iter()
        .any(|name| lower.contains(name.as_str()))
        || ganger_agents::names()
            .iter()
            .any(|name| names_agent_in_code(line, name))
}

/// Whether `line` matches or compares a sandbox kind.
fn matches_a_sandbox_kind(line: &str) -> bool {
    ["Local", "Bwrap", "Docker"].iter().any(|kind| {
        let variant = format!("SandboxKind::{kind}");
        let name = format!("\"{}\"", kind.to_lowercase());
        line.contains(&format!("{variant} =>"))
            || line.contains(&format!("== {variant}"))
            || line.contains(&format!("!= {variant}"))
            || line.contains(&format!("== ganger_sandbox::{variant}"))
            || line.contains(&format!("!= ganger_sandbox::{variant}"))
            || line.contains(&format!("== {name}"))
            || line.contains(&format!("!= {name}"))
    })
}

#[test]
fn no_engine_file_names_an_agent() {
    let files = engine_files();
    let found = hits(&files, |_, line| names_an_agent(line));
    assert!(
        found.is_empty(),
        "engine files name agents (ask the adapter instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn sandbox_kinds_are_matched_only_where_a_sandbox_is_chosen() {
    let files = engine_files();
    let found = hits(&files, |file, line| {
        file != SANDBOX_CHOOSER && matches_a_sandbox_kind(line)
    });
    assert!(
        found.is_empty(),
        "engine files match sandbox kinds (ask the sandbox instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checks_find_what_they_look_for() {
    // A check that cannot fail is no check: the same rules over lines that break them, and
    // over lines that only look as if they did.
    let installed = ganger_agents::adapters();
    assert!(installed.len() >= 5 && ganger_agents::names().len() > installed.len());
    let configured = ganger_agents::names()
        .into_iter()
        .find(|name| ganger_agents::adapter(name).is_none())
        .unwrap();
    for adapter in installed {
        assert!(names_an_agent(&format!(
            "let x = \"{}\";",
            adapter.display_name()
        )));
        assert!(names_an_agent(&format!(
            "// {} does it",
            adapter.name().to_uppercase()
        )));
    }
    for line in [
        format!("if agent == \"{configured}\" {{}}"),
        format!("\"{configured}\" => None,"),
        format!("use ganger_agents::{configured}::NAME;"),
        format!("let n = {configured}::NAME;"),
    ] {
        assert!(names_an_agent(&line), "{line}");
    }
    for line in [
        "let c = std::process::Command::new(\"x\");".to_owned(),
        format!("let k = sub{configured}::run();"),
        format!("table.insert(\"{configured}\".into(), program);"),
        "let kind = sandbox.kind();".to_owned(),
    ] {
        assert!(!names_an_agent(&line), "{line}");
        assert!(!matches_a_sandbox_kind(&line), "{line}");
    }
    for line in [
        "SandboxKind::Docker => {}",
        "if kind == SandboxKind::Local {",
        "task.sandbox != ganger_sandbox::SandboxKind::Local.as_str()",
        "task.sandbox == \"local\"",
    ] {
        assert!(matches_a_sandbox_kind(line), "{line}");
    }
}

//! The engine's floors, held (issue 15, item 2). Every file of `crates/engine/src` belongs to
//! a module of a floor (the table below); a file may use what is on its own floor or below,
//! never above; no operation uses another operation (an operation's own family of files,
//! `merge*`, `pipeline/`, `fleet/`..., is one operation); and no two files use each other, by
//! any path (no cycle). Uses are read from the sources: every `crate::MODULE` path outside a
//! `#[cfg(test)]` module. The test prints the graph it read, a line per module, so the note of
//! a change can quote it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a test fails loudly on what it did not expect, and prints the graph it checked"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, bottom first, and the modules on each. An operation is what a front end asks
/// for; the floors below are what operations share.
const FLOORS: &[(&str, &[&str])] = &[
    (
        "0 foundation",
        &[
            "error",
            "notice",
            "faults",
            "slug",
            "brief",
            "commander",
            "redact",
            "redact_stream",
            "config",
            "clean_report",
            "install",
            "scripted",
            "tokens",
        ],
    ),
    (
        "1 environment",
        &[
            "workspace",
            "store_location",
            "keys",
            "agent_env",
            "agent_tmp",
            "agent_tmp_sweep",
            "agent_query",
            "models",
            "agents",
            "image",
            "sandboxing",
            "leftovers",
            "machine",
        ],
    ),
    (
        "2 repository and evidence",
        &[
            "task_worktree",
            "half_made",
            "overlap",
            "budget",
            "checks",
            "report",
            "resume_note",
        ],
    ),
    (
        "3 rounds",
        &[
            "round",
            "launch",
            "reaper",
            "lost_session",
            "warm",
            "task_move",
        ],
    ),
    (
        "4 tasks",
        &[
            "lookup",
            "admission",
            "rules",
            "start",
            "fix",
            "fix_round",
            "cancel",
            "until_green",
            "labels",
            "pipeline_state",
        ],
    ),
    (
        "5 operations",
        &[
            "status",
            "wait",
            "log",
            "diff",
            "merge",
            "rewind",
            "clean",
            "attach",
            "adopt",
            "init",
            "journal",
            "ownership",
            "host_entry",
            "pipeline",
            "fleet",
            "canary",
        ],
    ),
    ("6 api", &["api", "lib"]),
];

/// Files that belong to a module of another name: an operation's family, and the parts of
/// the pipeline the other operations share.
const FAMILIES: &[(&str, &str)] = &[
    ("merge_commit", "merge"),
    ("merge_fix", "merge"),
    ("merge_report", "merge"),
    ("rewind_fork", "rewind"),
    ("clean_git", "clean"),
    ("pipeline/state", "pipeline_state"),
    ("pipeline/report", "pipeline_state"),
    ("pipeline/roles", "pipeline_state"),
    ("pipeline/plan_steps", "pipeline_state"),
    ("pipeline/verdict", "pipeline_state"),
    ("pipeline/text", "pipeline_state"),
    ("pipeline/effort", "pipeline_state"),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every source file, by its path under `src` without `.rs` (`round/host`, `lib`).
fn files() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = path
                    .strip_prefix(src())
                    .unwrap()
                    .with_extension("")
                    .to_string_lossy()
                    .into_owned();
                let text = std::fs::read_to_string(&path).unwrap();
                out.insert(name.trim_end_matches("/mod").to_owned(), text);
            }
        }
    }
    out
}

/// The module a file belongs to.
fn module_of(file: &str) -> String {
    if let Some((_, module)) = FAMILIES.iter().find(|(f, _)| *f == file) {
        return (*module).to_owned();
    }
    file.split('/').next().unwrap().to_owned()
}

fn floor_of(module: &str) -> Option<usize> {
    // The API's own files (`api_*`) are on its floor.
    if module.starts_with("api_") {
        return floor_of("api");
    }
    FLOORS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The text of a file without its test module and its comments (a doc link is no use).
fn without_tests(text: &str) -> String {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The files a file uses: each `crate::a::b` path, resolved to the longest file it names.
fn uses(file: &str, text: &str, all: &BTreeMap<String, String>) -> BTreeSet<String> {
    let text = &without_tests(text);
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(found) = text[at..].find("crate::") {
        let start = at + found + "crate::".len();
        let mut end = start;
        while end < bytes.len()
            && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_' || bytes[end] == b':')
        {
            end += 1;
        }
        let path: Vec<&str> = text[start..end]
            .split("::")
            .filter(|p| !p.is_empty())
            .collect();
        // `crate::a::b::c`: the longest prefix that is a file.
        for len in (1..=path.len()).rev() {
            let candidate = path[..len].join("/");
            if all.contains_key(&candidate) {
                if candidate != file {
                    out.insert(candidate);
                }
                break;
            }
        }
        at = end.max(start);
    }
    // `super::x` inside a folder (in a `use`, a `use super::{x, y}` or a path): a sibling.
    if let Some((folder, _)) = file.rsplit_once('/') {
        let mut rest: &str = text;
        while let Some(found) = rest.find("super::") {
            rest = &rest[found + "super::".len()..];
            let names: Vec<String> = match rest.strip_prefix('{') {
                Some(list) => list[..list.find('}').unwrap_or(list.len())]
                    .split(',')
                    .map(|part| part.trim().split("::").next().unwrap_or("").to_owned())
                    .collect(),
                None => vec![
                    rest.chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect(),
                ],
            };
            for name in names {
                let candidate = format!("{folder}/{name}");
                if all.contains_key(&candidate) && candidate != file {
                    out.insert(candidate);
                }
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let all = files();
    all.iter()
        .map(|(file, text)| (file.clone(), uses(file, text, &all)))
        .collect()
}

#[test]
fn every_module_has_a_floor() {
    let missing: BTreeSet<String> = files()
        .keys()
        .map(|f| module_of(f))
        .filter(|m| floor_of(m).is_none())
        .collect();
    assert!(missing.is_empty(), "modules with no floor: {missing:?}");
}

#[test]
fn nothing_uses_a_floor_above_it_and_no_operation_uses_another() {
    let graph = graph();
    let mut wrong = Vec::new();
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, used) in &graph {
        let module = module_of(file);
        let floor = floor_of(&module).unwrap_or(usize::MAX);
        for other in used {
            let other_module = module_of(other);
            if other_module == module {
                continue;
            }
            modules
                .entry(module.clone())
                .or_default()
                .insert(other_module.clone());
            let other_floor = floor_of(&other_module).unwrap_or(usize::MAX);
            if other_floor > floor {
                wrong.push(format!(
                    "{file} (floor {}) uses {other} (floor {})",
                    FLOORS.get(floor).map_or("?", |f| f.0),
                    FLOORS.get(other_floor).map_or("?", |f| f.0)
                ));
            } else if other_floor == floor && FLOORS[floor].0.ends_with("operations") {
                wrong.push(format!("operation {file} uses operation {other}"));
            }
        }
    }
    println!(
        "{} files, {} uses between files, {} wrong",
        graph.len(),
        graph.values().map(BTreeSet::len).sum::<usize>(),
        wrong.len()
    );
    for (name, members) in FLOORS {
        println!("floor {name}:");
        for module in *members {
            let used: Vec<String> = modules
                .get(*module)
                .map(|set| {
                    set.iter()
                        .map(|m| format!("{m}({})", floor_of(m).unwrap_or(99)))
                        .collect()
                })
                .unwrap_or_default();
            println!("  {module} -> {}", used.join(" "));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong uses:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn no_two_files_use_each_other_by_any_path() {
    let graph = graph();
    // Tarjan would do; a depth-first search for a back edge is enough to name one cycle.
    fn visit(
        file: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        on_path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = on_path.iter().position(|f| f == file) {
            let mut cycle = on_path[at..].to_vec();
            cycle.push(file.to_owned());
            return Some(cycle);
        }
        if done.contains(file) {
            return None;
        }
        on_path.push(file.to_owned());
        for next in graph.get(file).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, on_path, done) {
                return Some(cycle);
            }
        }
        on_path.pop();
        done.insert(file.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for file in graph.keys() {
        // lib.rs declares every module; it is the root, not a user.
        if file == "lib" {
            continue;
        }
        if let Some(cycle) = visit(file, &graph, &mut Vec::new(), &mut done) {
            panic!("a cycle between files: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_reader_finds_uses_it_is_shown() {
    let all: BTreeMap<String, String> = [
        ("a".to_owned(), String::new()),
        ("b/c".to_owned(), String::new()),
        ("b/d".to_owned(), String::new()),
    ]
    .into();
    let text = "use crate::a;\nfn f() { crate::b::c::g(); }\n";
    assert_eq!(
        uses("x", text, &all),
        ["a".to_owned(), "b/c".to_owned()].into()
    );
    assert_eq!(
        uses(
            "b/c",
            "use super::d::h;\n#[cfg(test)]\nmod tests { use crate::a; }\n",
            &all
        ),
        ["b/d".to_owned()].into()
    );
    assert_eq!(
        uses("b/c", "use super::{c, d::h};\n/// [`x`](crate::a)\n", &all),
        ["b/d".to_owned()].into()
    );
    assert_eq!(
        uses("b/c", "fn f() { super::d::g(); }\n", &all),
        ["b/d".to_owned()].into()
    );
}

//! The engine's floors, held (issue 15, item 2; issue 39, item 1). Each floor is a folder of
//! `crates/engine/src` (`FLOORS`, bottom first), and the root holds the floor folders and
//! `lib.rs` only: a file's floor is its folder. A file may use what is on its own floor or
//! below, never above; no operation (a folder of `ops/`, or a file of it) uses another; and no
//! two files use each other, by any path (no cycle). Uses are read from the sources: every
//! `crate::` path and `super::` sibling outside a `#[cfg(test)]` module. The test prints the
//! graph it read, a line per module, so the note of a change can quote it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a test fails loudly on what it did not expect, and prints the graph it checked"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, bottom first: a folder of `src` each. `lib.rs` is the API's.
const FLOORS: &[&str] = &["base", "env", "evidence", "round", "task", "ops", "api"];

/// The floor whose members are operations: none uses another.
const OPERATIONS: &str = "ops";

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

/// The module a file belongs to: its floor's folder, or for an operation its own folder or
/// file under `ops/`.
fn module_of(file: &str) -> String {
    let mut parts = file.split('/');
    let floor = parts.next().unwrap();
    match parts.next() {
        Some(operation) if floor == OPERATIONS => format!("{floor}/{operation}"),
        _ if file == "lib" => "api".to_owned(),
        _ => floor.to_owned(),
    }
}

/// The floor of a module, by its folder.
fn floor_of(module: &str) -> Option<usize> {
    let folder = module.split('/').next().unwrap();
    FLOORS.iter().position(|floor| *floor == folder)
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
fn the_root_holds_the_floors_and_lib_only() {
    let mut strays: Vec<String> = std::fs::read_dir(src())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "lib.rs" && !FLOORS.contains(&name.as_str()))
        .collect();
    strays.sort();
    assert!(strays.is_empty(), "not a floor folder: {strays:?}");
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
                    FLOORS.get(floor).copied().unwrap_or("?"),
                    FLOORS.get(other_floor).copied().unwrap_or("?")
                ));
            } else if other_floor == floor && FLOORS[floor] == OPERATIONS {
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
    for (at, floor) in FLOORS.iter().enumerate() {
        println!("floor {at} {floor}:");
        for (module, used) in modules.iter().filter(|(m, _)| floor_of(m) == Some(at)) {
            let used: Vec<String> = used
                .iter()
                .map(|m| format!("{m}({})", floor_of(m).unwrap_or(99)))
                .collect();
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

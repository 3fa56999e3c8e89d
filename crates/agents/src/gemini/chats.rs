//! Where Gemini CLI keeps a session (measured with 0.61.0: docs/agents/session-move.md):
//! `<home>/.gemini/tmp/<project>/chats/session-<time>-<first 8 of the id>.jsonl`, the home being
//! `$GEMINI_CLI_HOME`, else `$HOME`. `<project>` is the short name Gemini's project registry
//! gives the working directory: the one `projects.json` maps it to (while the folder's
//! `.project_root` names it), else a folder whose `.project_root` names it, else the first free
//! name made of the directory's base name (`app`, `app-1`, …). `--resume ID` looks in that
//! folder's `chats/` for a file named so whose first record has the id.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The folders where a project's name is claimed by a `.project_root` naming its directory.
const MARKED: [&str; 2] = ["tmp", "history"];
const MARKER: &str = ".project_root";

/// The file Gemini keeps `session` of a round in `worktree` in: the one it wrote, else where
/// Gemini would look for it.
pub(crate) fn chat_file(
    env: &BTreeMap<String, String>,
    worktree: &Path,
    session: &str,
) -> Option<PathBuf> {
    if !crate::is_session_name(session) || session.len() < 8 || !worktree.is_absolute() {
        return None;
    }
    let home = match env.get("GEMINI_CLI_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
        // A relative home is the agent's to resolve: no guess.
        Some(_) => return None,
        None => PathBuf::from(env.get("HOME")?),
    };
    let runtime = home.join(".gemini");
    let chats = runtime
        .join("tmp")
        .join(project_name(&runtime, worktree))
        .join("chats");
    let short = &session[..8];
    Some(
        find(&chats, session, short)
            .unwrap_or_else(|| chats.join(format!("session-moved-{short}.jsonl"))),
    )
}

/// The short name Gemini's registry gives `worktree` (or would give it, on its first run).
fn project_name(runtime: &Path, worktree: &Path) -> String {
    let registered = registry(runtime);
    let target = worktree.to_string_lossy();
    if let Some(name) = registered.get(target.as_ref())
        && owner_ok(runtime, name, worktree)
    {
        return name.clone();
    }
    for base in MARKED {
        let Ok(entries) = std::fs::read_dir(runtime.join(base)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if marker_owner(runtime, base, &name).as_deref() == Some(worktree) {
                return name;
            }
        }
    }
    let base = slugify(
        &worktree
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
    );
    let taken: Vec<&String> = registered.values().collect();
    (0..)
        .map(|n| {
            if n == 0 {
                base.clone()
            } else {
                format!("{base}-{n}")
            }
        })
        .find(|candidate| !taken.contains(&candidate) && owner_ok(runtime, candidate, worktree))
        .unwrap_or(base)
}

/// `projects.json`'s map of directories to names (empty when there is none to read).
fn registry(runtime: &Path) -> BTreeMap<String, String> {
    std::fs::read(runtime.join("projects.json"))
        .ok()
        .and_then(|text| serde_json::from_slice::<serde_json::Value>(&text).ok())
        .and_then(|json| {
            let projects = json.get("projects")?.as_object()?;
            Some(
                projects
                    .iter()
                    .filter_map(|(dir, name)| Some((dir.clone(), name.as_str()?.to_owned())))
                    .collect(),
            )
        })
        .unwrap_or_default()
}

/// The directory the `.project_root` of `name` under `base` names.
fn marker_owner(runtime: &Path, base: &str, name: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(runtime.join(base).join(name).join(MARKER)).ok()?;
    Some(PathBuf::from(text.trim()))
}

/// Whether no folder of `name` is claimed by another directory than `worktree`.
fn owner_ok(runtime: &Path, name: &str, worktree: &Path) -> bool {
    MARKED.iter().all(|base| {
        let marker = runtime.join(base).join(name).join(MARKER);
        !marker.exists() || marker_owner(runtime, base, name).as_deref() == Some(worktree)
    })
}

/// Gemini's slug of a base name: lower case, each run of other characters than letters and
/// digits one '-', none at either end; `project` when nothing is left.
fn slugify(text: &str) -> String {
    let mut slug = String::new();
    for c in text.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-');
    if slug.is_empty() {
        "project".to_owned()
    } else {
        slug.to_owned()
    }
}

/// The chat file in `chats` whose first record is session `session`; of several, the
/// largest: a resumed session's run also leaves a stub of the same id with no turns in it
/// (measured: 1,028 bytes beside the 3,809 of the conversation), which Gemini does not resume.
fn find(chats: &Path, session: &str, short: &str) -> Option<PathBuf> {
    let ends = [format!("-{short}.jsonl"), format!("-{short}.json")];
    let needle = format!("\"sessionId\":\"{session}\"");
    std::fs::read_dir(chats)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name().is_some_and(|name| {
                let name = name.to_string_lossy();
                name.starts_with("session-") && ends.iter().any(|end| name.ends_with(end))
            })
        })
        .filter(|path| first_line(path).is_some_and(|line| line.contains(&needle)))
        .max_by_key(|path| std::fs::metadata(path).map_or(0, |m| m.len()))
}

/// The first line of `path` (at most 64 KiB of it).
fn first_line(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let line = head.split(|b| *b == b'\n').next()?;
    Some(String::from_utf8_lossy(line).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "c75b4905-2cf9-4c62-9193-c002aafe510b";

    fn env(home: &Path) -> BTreeMap<String, String> {
        BTreeMap::from([("HOME".to_owned(), home.to_string_lossy().into_owned())])
    }

    #[test]
    fn slugs_are_geminis() {
        assert_eq!(slugify("repo-agent-c1"), "repo-agent-c1");
        assert_eq!(slugify("My App__2"), "my-app-2");
        assert_eq!(slugify("..."), "project");
    }

    #[test]
    fn the_registered_name_the_marked_one_and_else_the_first_free_one() {
        let home = tempfile::tempdir().unwrap();
        let runtime = home.path().join(".gemini");
        let worktree = Path::new("/w/hostB/app");
        // Nothing yet: the base name.
        assert_eq!(
            chat_file(&env(home.path()), worktree, ID).unwrap(),
            runtime.join("tmp/app/chats/session-moved-c75b4905.jsonl")
        );
        // `app` is another directory's: the next free name.
        std::fs::create_dir_all(runtime.join("tmp/app")).unwrap();
        std::fs::write(runtime.join("tmp/app/.project_root"), "/w/hostA/app\n").unwrap();
        assert_eq!(project_name(&runtime, worktree), "app-1");
        // A folder marked as this one's is its name, and so is the registry's.
        std::fs::create_dir_all(runtime.join("history/mine")).unwrap();
        std::fs::write(runtime.join("history/mine/.project_root"), "/w/hostB/app").unwrap();
        assert_eq!(project_name(&runtime, worktree), "mine");
        std::fs::write(
            runtime.join("projects.json"),
            r#"{"projects":{"/w/hostB/app":"reg"}}"#,
        )
        .unwrap();
        assert_eq!(project_name(&runtime, worktree), "reg");
    }

    #[test]
    fn the_file_gemini_wrote_is_the_one_whose_first_record_has_the_id() {
        let home = tempfile::tempdir().unwrap();
        let chats = home.path().join(".gemini/tmp/app/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let other = "c75b4905-0000-4000-8000-000000000000";
        std::fs::write(
            chats.join("session-2026-12-06T23-29-c75b4905.jsonl"),
            format!("{{\"sessionId\":\"{other}\"}}\n"),
        )
        .unwrap();
        let written = chats.join("session-2026-12-06T23-30-c75b4905.jsonl");
        std::fs::write(
            &written,
            format!("{{\"sessionId\":\"{ID}\",\"kind\":\"main\"}}\n"),
        )
        .unwrap();
        assert_eq!(
            chat_file(&env(home.path()), Path::new("/w/app"), ID).unwrap(),
            written
        );
        // A resumed run's stub of the same id (no turns) is not the conversation.
        std::fs::write(
            chats.join("session-2026-12-06T23-42-c75b4905.jsonl"),
            format!("{{\"sessionId\":\"{ID}\"}}\n"),
        )
        .unwrap();
        assert_eq!(
            chat_file(&env(home.path()), Path::new("/w/app"), ID).unwrap(),
            written
        );
        assert_eq!(chat_file(&env(home.path()), Path::new("rel"), ID), None);
        assert_eq!(
            chat_file(&env(home.path()), Path::new("/w/app"), "short"),
            None
        );
    }
}

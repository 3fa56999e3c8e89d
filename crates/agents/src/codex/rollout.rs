//! Where Codex keeps a thread: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl`
//! (measured with 0.171.0: docs/agents/session-move.md). Codex finds a thread by its id under
//! any folder of `sessions/`, but only in a file with a rollout's canonical name; a thread's
//! id is a UUIDv7, whose first 48 bits are the milliseconds it was begun at, which give the
//! name's time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file Codex keeps thread `session` in, in the home `env` gives it: the one it wrote
/// (found by its name), else where a thread begun when its id says would be.
pub(crate) fn rollout_file(env: &BTreeMap<String, String>, session: &str) -> Option<PathBuf> {
    if !crate::is_session_name(session) {
        return None;
    }
    let home = match env.get("CODEX_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
        // A relative home is the agent's to resolve: no guess.
        Some(_) => return None,
        None => PathBuf::from(env.get("HOME")?).join(".codex"),
    };
    let sessions = home.join("sessions");
    let canonical = sessions.join(canonical_name(session)?);
    if canonical.is_file() {
        return Some(canonical);
    }
    Some(find(&sessions, session).unwrap_or(canonical))
}

/// `YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl` for a thread whose id is a UUIDv7
/// (in UTC; Codex names its own in local time, which it does not read back).
fn canonical_name(session: &str) -> Option<PathBuf> {
    let hex: String = session.chars().filter(|c| *c != '-').take(12).collect();
    if hex.len() != 12 {
        return None;
    }
    let ms = u64::from_str_radix(&hex, 16).ok()?;
    let secs = ms / 1000;
    let (year, month, day) = civil_date(secs / 86_400);
    let of_day = secs % 86_400;
    let (hour, minute, second) = (of_day / 3600, of_day % 3600 / 60, of_day % 60);
    Some(
        PathBuf::from(format!("{year:04}/{month:02}/{day:02}")).join(format!(
            "rollout-{year:04}-{month:02}-{day:02}T{hour:02}-{minute:02}-{second:02}-{session}.jsonl"
        )),
    )
}

/// The date `days` after 1970-01-01 (Howard Hinnant's days-to-civil).
fn civil_date(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// A rollout of `session` under `sessions` (its year, month and day folders).
fn find(sessions: &Path, session: &str) -> Option<PathBuf> {
    let suffix = format!("-{session}.jsonl");
    let mut folders = vec![(sessions.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        for entry in std::fs::read_dir(&folder).ok()?.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                if depth < 3 {
                    folders.push((path, depth + 1));
                }
            } else if name.starts_with("rollout-") && name.ends_with(&suffix) {
                return Some(path);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "01a24db0-fef9-7381-882b-387605e12486";

    #[test]
    fn a_uuid7_names_the_rollout_codex_itself_named() {
        // Codex 0.171.0 saved this thread as sessions/2026/12/06/rollout-2026-12-06T23-29-34-<id>.jsonl.
        assert_eq!(
            canonical_name(ID).unwrap(),
            PathBuf::from(format!("2026/12/06/rollout-2026-12-06T23-29-34-{ID}.jsonl"))
        );
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
    }

    #[test]
    fn the_file_codex_wrote_is_found_wherever_it_is_and_else_the_canonical_place() {
        let home = tempfile::tempdir().unwrap();
        let env = BTreeMap::from([(
            "CODEX_HOME".to_owned(),
            home.path().to_string_lossy().into_owned(),
        )]);
        let canonical = home
            .path()
            .join("sessions")
            .join(canonical_name(ID).unwrap());
        assert_eq!(rollout_file(&env, ID).unwrap(), canonical);
        let written = home.path().join(format!(
            "sessions/2026/12/07/rollout-2026-12-07T00-29-35-{ID}.jsonl"
        ));
        std::fs::create_dir_all(written.parent().unwrap()).unwrap();
        std::fs::write(&written, "{}\n").unwrap();
        assert_eq!(rollout_file(&env, ID).unwrap(), written);
        assert_eq!(rollout_file(&env, "../x"), None);
        let relative = BTreeMap::from([("CODEX_HOME".to_owned(), "rel".to_owned())]);
        assert_eq!(rollout_file(&relative, ID), None);
    }
}

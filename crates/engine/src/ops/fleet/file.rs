//! A fleet file (`ganger fleet run|submit FILE.toml`): its tasks with their briefs, agents,
//! models, sandboxes and `after` dependencies, and its limits. Everything is checked before
//! anything is queued: unknown keys, slugs, briefs, dependencies on tasks the file does not
//! name, and cycles (named in the error, `a -> b -> a`).

use super::limits::Limits;
use super::race_task::{FleetRace, Given, race_of};
use crate::base::error::{EngineError, Result};
use crate::task::labels::LAND_LABEL;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A fleet file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FleetToml {
    name: Option<String>,
    /// The git remote workers on any host get the repository from and push rounds to.
    remote: Option<String>,
    #[serde(default)]
    limits: Limits,
    #[serde(default)]
    defaults: TaskDefaults,
    /// The fleet's budget over all its tasks' rounds.
    #[serde(default)]
    budget: BudgetToml,
    #[serde(default, rename = "task")]
    tasks: Vec<TaskToml>,
}

/// What every task of the file gets unless it says otherwise.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskDefaults {
    agent: Option<String>,
    model: Option<String>,
    sandbox: Option<String>,
    base: Option<String>,
    timeout: Option<String>,
}

/// A budget: dollars and tokens, each optional.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetToml {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskToml {
    slug: String,
    brief: Option<PathBuf>,
    message: Option<String>,
    agent: Option<String>,
    model: Option<String>,
    sandbox: Option<String>,
    base: Option<String>,
    timeout: Option<String>,
    #[serde(default)]
    after: Vec<String>,
    #[serde(default)]
    checks: Vec<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    budget: BudgetToml,
    /// Queued to land once its last round passes its checks (the label `land=true`).
    #[serde(default)]
    land: bool,
    /// A race of these attempts (`AGENT[:MODEL][*COUNT],...`, docs/races.md).
    attempts: Option<String>,
    /// The race's first attempt to pass wins at once.
    #[serde(default)]
    first_green: bool,
}

/// A fleet, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Fleet {
    pub name: String,
    pub file: PathBuf,
    /// The git remote its rounds are run from and pushed to (an absolute path or a URL,
    /// never with a password).
    pub remote: Option<String>,
    pub limits: Limits,
    pub budget: BudgetToml,
    pub tasks: Vec<FleetTask>,
}

/// One task of a fleet, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetTask {
    pub slug: String,
    /// The task's text.
    pub prompt: String,
    /// The start's options, as queued (see `deliver::StartSpec`).
    pub options: serde_json::Value,
    pub after: Vec<String>,
    /// When the task is a race (`attempts = "SPEC"`): its attempts, the fleet's tasks.
    pub race: Option<FleetRace>,
}

/// Reads and checks a fleet file.
pub fn read_fleet(path: &Path) -> Result<Fleet> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        EngineError::invalid(format!(
            "cannot read the fleet file {}: {e}",
            path.display()
        ))
    })?;
    let parsed: FleetToml = toml::from_str(&text).map_err(|e| {
        EngineError::invalid(format!(
            "{}: {}",
            path.display(),
            e.message().lines().next().unwrap_or("not a fleet file")
        ))
    })?;
    let name = match parsed.name {
        Some(name) => name,
        None => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "fleet".into()),
    };
    crate::base::slug::check_slug(&name)
        .map_err(|e| EngineError::invalid(format!("fleet name: {}", e.message)))?;
    if parsed.tasks.is_empty() {
        return Err(EngineError::invalid(format!(
            "{} names no task; add [[task]] tables with a slug and a brief or message",
            path.display()
        )));
    }
    parsed.limits.check()?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let remote = parsed
        .remote
        .as_deref()
        .map(|remote| remote_of(dir, remote))
        .transpose()?;
    let mut seen = BTreeSet::new();
    let mut tasks = Vec::new();
    for task in &parsed.tasks {
        crate::base::slug::check_slug(&task.slug)?;
        if !seen.insert(task.slug.clone()) {
            return Err(EngineError::invalid(format!(
                "task {} is named twice in {}",
                task.slug,
                path.display()
            )));
        }
        tasks.push(fleet_task(dir, task, &parsed.defaults)?);
    }
    for task in &tasks {
        for after in &task.after {
            if !seen.contains(after) {
                return Err(EngineError::invalid(format!(
                    "task {} comes after {after}, which {} does not name",
                    task.slug,
                    path.display()
                )));
            }
        }
    }
    if let Some(cycle) = find_cycle(&tasks) {
        return Err(EngineError::invalid(format!(
            "the tasks' `after` make a cycle: {}",
            cycle_text(&cycle)
        ))
        .hint("a task cannot wait for itself; remove one of these dependencies"));
    }
    Ok(Fleet {
        name,
        file: path.to_path_buf(),
        remote,
        limits: parsed.limits,
        budget: parsed.budget,
        tasks,
    })
}

/// One task of a fleet file, checked, with the fleet's defaults where it gives none.
fn fleet_task(dir: &Path, task: &TaskToml, defaults: &TaskDefaults) -> Result<FleetTask> {
    let prompt = match (&task.brief, &task.message) {
        (Some(brief), None) => {
            let brief = dir.join(brief);
            crate::base::brief::read_brief(&crate::base::brief::Brief::File(brief))?
        }
        (None, Some(message)) => {
            crate::base::brief::read_brief(&crate::base::brief::Brief::Message(message.clone()))?
        }
        _ => {
            return Err(EngineError::invalid(format!(
                "task {}: give exactly one of brief = FILE or message = TEXT",
                task.slug
            )));
        }
    };
    let pick =
        |own: &Option<String>, default: &Option<String>| own.clone().or_else(|| default.clone());
    let timeout = pick(&task.timeout, &defaults.timeout)
        .map(|t| {
            crate::base::config::parse_duration(&t)
                .and_then(|d| {
                    (!d.is_zero())
                        .then_some(d)
                        .ok_or_else(|| format!("{t:?}: a limit of 0 would stop the round at once"))
                })
                .map_err(|e| EngineError::invalid(format!("task {}: timeout: {e}", task.slug)))
        })
        .transpose()?;
    let sandbox = pick(&task.sandbox, &defaults.sandbox);
    if let Some(sandbox) = &sandbox {
        sandbox
            .parse::<ganger_sandbox::SandboxKind>()
            .map_err(|e| EngineError::invalid(format!("task {}: {e}", task.slug)))?;
    }
    let options = serde_json::json!({
        "agent": pick(&task.agent, &defaults.agent),
        "model": pick(&task.model, &defaults.model),
        "sandbox": sandbox,
        "base": pick(&task.base, &defaults.base),
        "timeout_ms": timeout.map(|t| t.as_millis() as u64),
        "checks": task.checks,
        "labels": labels(task)?,
        "budget_usd": task.budget.usd,
        "budget_tokens": task.budget.tokens,
    });
    if task.first_green && task.attempts.is_none() {
        return Err(EngineError::invalid(format!(
            "task {}: first_green is a race's: give attempts = \"SPEC\" too",
            task.slug
        )));
    }
    let given = Given {
        agent: task.agent.is_some(),
        model: task.model.is_some(),
        land: task.land,
    };
    let race = task
        .attempts
        .as_deref()
        .map(|spec| race_of(&task.slug, spec, task.first_green, &options, given))
        .transpose()?;
    Ok(FleetTask {
        slug: task.slug.clone(),
        prompt,
        options,
        after: task.after.clone(),
        race,
    })
}

/// A task's labels as `KEY=VALUE`, with `land=true` for `land = true`.
fn labels(task: &TaskToml) -> Result<Vec<String>> {
    let mut labels = task.labels.clone();
    if task.land {
        let land = labels.insert(LAND_LABEL.to_owned(), "true".to_owned());
        if land.is_some_and(|value| value != "true") {
            return Err(EngineError::invalid(format!(
                "task {}: land = true, and a label {LAND_LABEL} of another value",
                task.slug
            )));
        }
    }
    Ok(labels.iter().map(|(k, v)| format!("{k}={v}")).collect())
}

/// A fleet's remote as written: a URL of one of git's own transports without a credential, a
/// `host:path` or a path (made absolute from the fleet file's directory). Everything else is
/// refused: git's remote helpers (`ext::CMD` runs a command, `fd::N` reads a descriptor) and
/// any credential, which would be stored and shown with every fleet. No refusal echoes the
/// remote: a token may be anywhere in it.
fn remote_of(dir: &Path, remote: &str) -> Result<String> {
    let remote = remote.trim();
    if remote.is_empty() {
        return Err(EngineError::invalid("the fleet's remote is empty"));
    }
    if remote.starts_with('-') || remote.contains(char::is_control) {
        return Err(EngineError::invalid(
            "the fleet's remote is not a git URL or path (it starts with '-' or holds a control \
             character)",
        ));
    }
    if let Some((scheme, rest)) = remote.split_once("://")
        && !scheme.contains(['/', ':'])
    {
        check_remote_url(scheme, rest)?;
        return Ok(remote.to_owned());
    }
    // git reads `TRANSPORT::ADDRESS` as a remote helper when TRANSPORT is all URL-scheme
    // characters from the start.
    let helper = remote.split_once("::").is_some_and(|(transport, _)| {
        !transport.is_empty()
            && transport
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if helper {
        return Err(EngineError::invalid(
            "the fleet's remote names one of git's remote helpers (TRANSPORT::ADDRESS), which \
             ganger does not run",
        )
        .hint("give an https://, ssh://, git:// or file:// URL, host:path, or a path"));
    }
    let path = Path::new(remote);
    let scp_like = !path.is_absolute()
        && remote
            .split_once(':')
            .is_some_and(|(host, _)| !host.contains('/'));
    if scp_like {
        return Ok(remote.to_owned());
    }
    let absolute =
        std::path::absolute(dir.join(path)).map_err(|e| EngineError::io("resolve", path, e))?;
    Ok(crate::evidence::task_worktree::normalize(&absolute)
        .to_string_lossy()
        .into_owned())
}

/// Refuses a remote URL (`scheme://rest`) whose transport is not one of git's own, or that
/// carries a credential: a user name or password in an `http(s)://` or `git://` URL (GitHub's
/// `https://TOKEN@github.com/...` among them), a password in an `ssh://` one, a query.
fn check_remote_url(scheme: &str, rest: &str) -> Result<()> {
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "https" | "http" | "ssh" | "git" | "file") {
        return Err(EngineError::invalid(
            "the fleet's remote URL is not of a transport ganger uses",
        )
        .hint("give an https://, ssh://, git:// or file:// URL, host:path, or a path"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let user_info = authority.rsplit_once('@').map(|(user, _)| user);
    let credential = match scheme.as_str() {
        // ssh names its user in the URL (ssh://git@host/...); its password never.
        "ssh" => user_info.is_some_and(|user| user.contains(':') || user.contains('%')),
        "file" => false,
        _ => user_info.is_some(),
    };
    if credential {
        return Err(EngineError::invalid(
            "the fleet's remote URL carries a user name or password before its '@', which would \
             be stored and shown with every fleet",
        )
        .hint("leave it out and give git a credential helper or an SSH key on each worker"));
    }
    if scheme != "file" && rest.contains(['?', '#']) {
        return Err(EngineError::invalid(
            "the fleet's remote URL has a query or fragment, which may carry a token and would \
             be stored and shown with every fleet",
        )
        .hint("leave it out and give git a credential helper or an SSH key on each worker"));
    }
    Ok(())
}

/// The first cycle of `after` links, as the slugs along it with the first repeated at the
/// end (`a -> b -> a`); `None` when there is none. A depth-first search in file order, with
/// its own stack rather than the thread's: a fleet file may chain tens of thousands of tasks.
pub fn find_cycle(tasks: &[FleetTask]) -> Option<Vec<String>> {
    let links: BTreeMap<&str, &[String]> = tasks
        .iter()
        .map(|t| (t.slug.as_str(), t.after.as_slice()))
        .collect();
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    let mut marks: BTreeMap<&str, Mark> = BTreeMap::new();
    for task in tasks {
        if marks.contains_key(task.slug.as_str()) {
            continue;
        }
        // The path from `task`: each slug with how many of its links were followed.
        let mut path: Vec<(&str, usize)> = vec![(task.slug.as_str(), 0)];
        marks.insert(task.slug.as_str(), Mark::Open);
        while let Some((slug, followed)) = path.last_mut() {
            let after = links.get(*slug).copied().unwrap_or_default();
            let Some(next) = after.get(*followed) else {
                marks.insert(*slug, Mark::Done);
                path.pop();
                continue;
            };
            *followed += 1;
            match marks.get(next.as_str()) {
                Some(Mark::Done) => {}
                Some(Mark::Open) => {
                    let start = path.iter().position(|(s, _)| *s == next).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        path[start..].iter().map(|(s, _)| (*s).to_owned()).collect();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                None => {
                    marks.insert(next.as_str(), Mark::Open);
                    path.push((next.as_str(), 0));
                }
            }
        }
    }
    None
}

/// A cycle as one readable line: `a -> b -> a`, with the middle of a long one left out.
pub fn cycle_text(cycle: &[String]) -> String {
    const SHOWN: usize = 5;
    if cycle.len() <= 2 * SHOWN + 1 {
        return cycle.join(" -> ");
    }
    let left_out = cycle.len() - 2 * SHOWN;
    format!(
        "{} -> ... ({} more) -> {}",
        cycle[..SHOWN].join(" -> "),
        thousands(left_out),
        cycle[cycle.len() - SHOWN..].join(" -> ")
    )
}

/// `59991` as `59,991`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_is_a_url_without_a_password_or_a_path_made_absolute() {
        let dir = Path::new("/work/fleets");
        for url in [
            "https://git.example.com/app.git",
            "ssh://git@git.example.com/app.git",
            "git://127.0.0.1:9418/app.git",
            "git@git.example.com:team/app.git",
        ] {
            assert_eq!(remote_of(dir, url).unwrap(), url);
        }
        assert_eq!(
            remote_of(dir, "../served/app.git").unwrap(),
            "/work/served/app.git"
        );
        assert_eq!(
            remote_of(dir, "file:///srv/git/app.git").unwrap(),
            "file:///srv/git/app.git"
        );
        let refused = remote_of(dir, "https://me:s3cret@git.example.com/app.git").unwrap_err();
        assert!(refused.message.contains("password"), "{refused:?}");
        assert!(!refused.message.contains("s3cret"), "{refused:?}");
        // A token as the user name (GitHub's documented form), an encoded colon, a password
        // in ssh, a token in the query: refused, the token echoed nowhere.
        for (bad, why) in [
            ("https://ghp_s3cret@github.com/team/app.git", "password"),
            ("HTTPS://ghp_s3cret@github.com/team/app.git", "password"),
            ("https://user%3As3cret@git.example.com/app.git", "password"),
            ("http://oauth2:s3cret@git.example.com/app.git", "password"),
            ("git://s3cret@git.example.com/app.git", "password"),
            ("ssh://git:s3cret@git.example.com/app.git", "password"),
            (
                "https://git.example.com/app.git?access_token=s3cret",
                "query",
            ),
            ("https://git.example.com/app.git#s3cret", "query"),
        ] {
            let refused = remote_of(dir, bad).unwrap_err();
            assert!(refused.message.contains(why), "{bad}: {refused:?}");
            assert!(!refused.message.contains("s3cret"), "{refused:?}");
        }
        // git's remote helpers and other transports are not remotes ganger runs.
        for bad in [
            "ext::sh -c touch% /tmp/s3cret",
            "ext::sh",
            "fd::17",
            "foo::bar",
            "rsync://host/app.git",
            "ftp://host/app.git",
            "s3cret::https://git.example.com/app.git",
        ] {
            let refused = remote_of(dir, bad).unwrap_err();
            assert!(!refused.message.contains("s3cret"), "{refused:?}");
        }
        for bad in ["", "  ", "--upload-pack=touch /tmp/x", "a\nb"] {
            assert!(remote_of(dir, bad).is_err(), "{bad:?}");
        }
        // A path may hold a space, or `::` past its start.
        assert_eq!(
            remote_of(dir, "/srv/my repos/a::b.git").unwrap(),
            "/srv/my repos/a::b.git"
        );
    }

    fn task(slug: &str, after: &[&str]) -> FleetTask {
        FleetTask {
            slug: slug.into(),
            prompt: String::new(),
            options: serde_json::Value::Null,
            after: after.iter().map(|s| (*s).to_owned()).collect(),
            race: None,
        }
    }

    #[test]
    fn a_cycle_is_named_along_its_links() {
        let tasks = [
            task("a", &[]),
            task("b", &["a", "d"]),
            task("c", &["b"]),
            task("d", &["c"]),
        ];
        assert_eq!(
            find_cycle(&tasks),
            Some(vec!["b".into(), "d".into(), "c".into(), "b".into()])
        );
        assert_eq!(
            find_cycle(&[task("a", &["a"])]),
            Some(vec!["a".into(), "a".into()])
        );
        assert_eq!(find_cycle(&[task("a", &[]), task("b", &["a"])]), None);
    }

    #[test]
    fn a_dependency_chain_of_60_000_tasks_is_walked_without_recursion() {
        // Each task after the next: a depth-first search from the first goes 60,000 deep.
        let n = 60_000;
        let mut tasks: Vec<FleetTask> = (0..n)
            .map(|i| {
                let after = if i + 1 < n {
                    vec![format!("t{}", i + 1)]
                } else {
                    Vec::new()
                };
                FleetTask {
                    slug: format!("t{i}"),
                    prompt: String::new(),
                    options: serde_json::Value::Null,
                    after,
                    race: None,
                }
            })
            .collect();
        assert_eq!(find_cycle(&tasks), None);
        // Closed at the end: the cycle is found and named, cut short in the middle.
        tasks[n - 1].after = vec!["t0".into()];
        let cycle = find_cycle(&tasks).unwrap();
        assert_eq!(cycle.len(), n + 1);
        assert_eq!(
            (cycle[0].as_str(), cycle[n - 1].as_str(), cycle[n].as_str()),
            ("t0", "t59999", "t0")
        );
        assert_eq!(
            cycle_text(&cycle),
            "t0 -> t1 -> t2 -> t3 -> t4 -> ... (59,991 more) -> t59996 -> t59997 -> t59998 -> t59999 -> t0"
        );
    }

    #[test]
    fn a_file_is_checked_whole_before_anything_is_queued() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.toml");
        std::fs::write(dir.path().join("b.md"), "do b").unwrap();
        std::fs::write(
            &file,
            "[limits]\nglobal = 2\nmodels = { \"m/x\" = 1 }\n[defaults]\nagent = \"command\"\n\
             [[task]]\nslug = \"a\"\nmessage = \"do a\"\nmodel = \"m/x\"\n\
             [[task]]\nslug = \"b\"\nbrief = \"b.md\"\nafter = [\"a\"]\n",
        )
        .unwrap();
        let fleet = read_fleet(&file).unwrap();
        assert_eq!(fleet.name, "f");
        assert_eq!(fleet.tasks[1].prompt, "do b");
        assert_eq!(fleet.tasks[1].after, vec!["a".to_owned()]);
        assert_eq!(fleet.tasks[0].options["model"], "m/x");
        assert_eq!(fleet.tasks[1].options["agent"], "command");
        assert_eq!(fleet.limits.global, Some(2));

        std::fs::write(
            &file,
            "[[task]]\nslug = \"a\"\nmessage = \"x\"\nafter = [\"zz\"]\n",
        )
        .unwrap();
        let error = read_fleet(&file).unwrap_err();
        assert!(error.message.contains("after zz"), "{}", error.message);
        std::fs::write(
            &file,
            "[[task]]\nslug = \"a\"\nmessage = \"x\"\nafter = [\"a\"]\n",
        )
        .unwrap();
        let error = read_fleet(&file).unwrap_err();
        assert!(error.message.contains("a -> a"), "{}", error.message);
        std::fs::write(&file, "[[task]]\nslug = \"a\"\nmesage = \"x\"\n").unwrap();
        assert!(read_fleet(&file).is_err());
    }
}

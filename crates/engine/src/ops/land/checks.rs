//! The repository's checks on a batch's combined tree: a scratch worktree of the base's
//! repository (`.ganger/land/BASE`, detached), checked out at each commit to test, and each
//! `[[checks]]` entry run there with `sh -c`, in the batch's sandbox (`place.rs`: the tasks'
//! sandbox kind, its environment), in its time limit. A check that fails is run once more unchanged: passing then, it is flaky,
//! recorded and not held against the batch.

use crate::base::config::CheckConfig;
use crate::base::error::{EngineError, Result};
use crate::base::redact::Redactor;
use crate::evidence::checks::{Capture, tail};
use ganger_git::Repo;
use ganger_sandbox::{AgentCommand, Waited, spawn_local};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a check that outlived its limit is given between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// A check that failed, with the end of its output.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FailedCheck {
    pub name: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub tail: String,
}

/// The checks' verdict on one commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub failed: Vec<FailedCheck>,
    /// Checks that failed once and passed when run again unchanged.
    pub flaky: Vec<String>,
    /// How many checks were run again.
    pub retries: u32,
}

impl Verdict {
    pub(crate) fn green(&self) -> bool {
        self.failed.is_empty()
    }
}

/// The lander's scratch worktree for one base.
pub(crate) struct Scratch {
    dir: PathBuf,
    /// Where the checks' whole output goes, a file per check run.
    logs: PathBuf,
    /// The checks' processes' marker.
    token: String,
    runs: u32,
}

impl Scratch {
    /// The scratch worktree at `dir`, made (detached at `commit`) unless it is there.
    pub(crate) fn open(main: &Repo, dir: &Path, commit: &str) -> Result<Scratch> {
        if !dir.join(".git").exists() {
            // What a killed lander left half made is not a worktree yet.
            let _ = main.git().run(["worktree", "prune"]);
            if dir.exists() {
                std::fs::remove_dir_all(dir).map_err(|e| EngineError::io("remove", dir, e))?;
            }
            let path = dir.to_string_lossy().into_owned();
            main.git()
                .run(["worktree", "add", "-q", "--detach", path.as_str(), commit])?;
        }
        let logs = dir.with_extension("logs");
        std::fs::create_dir_all(&logs).map_err(|e| EngineError::io("create", &logs, e))?;
        Ok(Scratch {
            dir: dir.to_path_buf(),
            logs,
            token: format!("land-{}", std::process::id()),
            runs: 0,
        })
    }

    /// The scratch worktree's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Checks out `commit` exactly: tracked files as the commit has them, untracked ones
    /// removed (ignored ones, build caches, kept).
    fn checkout(&self, commit: &str) -> Result<()> {
        let git = ganger_git::Git::new(&self.dir);
        git.run(["checkout", "-q", "-f", "--detach", commit])?;
        git.run(["clean", "-q", "-f", "-f", "-d"])?;
        Ok(())
    }

    /// Runs `checks` on `commit`; a failing one is run once more, and passing then it is
    /// flaky.
    pub(crate) fn judge(
        &mut self,
        commit: &str,
        checks: &[CheckConfig],
        confine: &Confine<'_>,
        after: &dyn Fn(&str),
    ) -> Result<Verdict> {
        self.checkout(commit)?;
        self.runs += 1;
        let mut verdict = Verdict::default();
        for check in checks {
            let log = self.logs.join(format!("{}-{}.log", self.runs, check.name));
            let first = run_check(&self.dir, check, &self.token, &log, confine);
            after(&self.token);
            let Some(failed) = first? else {
                continue;
            };
            verdict.retries += 1;
            self.checkout(commit)?;
            let log = self
                .logs
                .join(format!("{}-{}-again.log", self.runs, check.name));
            let again = run_check(&self.dir, check, &self.token, &log, confine);
            after(&self.token);
            match again? {
                None => verdict.flaky.push(check.name.clone()),
                Some(_) => verdict.failed.push(failed),
            }
        }
        Ok(verdict)
    }
}

/// How a check's command is confined: the batch's sandbox, with its environment.
pub(crate) type Confine<'a> = dyn Fn(AgentCommand) -> Result<AgentCommand> + 'a;

/// Runs one check in `dir`, `confine`d, through the sandbox crate's local spawn (marked with
/// `token`, so that what it leaves running is stopped with it): `None` when it passed, else
/// how it failed. Its whole output goes to `log`.
fn run_check(
    dir: &Path,
    check: &CheckConfig,
    token: &str,
    log: &Path,
    confine: &Confine<'_>,
) -> Result<Option<FailedCheck>> {
    let command = AgentCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), format!("exec 2>&1\n{}", check.command).into()],
        env: Vec::new(),
        cwd: dir.to_path_buf(),
        stdin: None,
        token: token.to_owned(),
        use_cgroup: false,
    };
    let command = confine(command)?;
    let file = std::fs::File::create(log).map_err(|e| EngineError::io("create", log, e))?;
    let capture = Capture::new(file, Redactor::new([]));
    let mut running = spawn_local(&command)?;
    let readers = capture.follow_output(&mut running);
    let (exit, timed_out) = match running.wait_timeout(check.timeout(), None) {
        Waited::Exited(exit) => (exit, false),
        Waited::TimedOut | Waited::Woken => (running.stop(GRACE), true),
    };
    running.stop_leftovers(GRACE);
    for reader in readers {
        let _ = reader.join();
    }
    if !timed_out && exit.code == Some(0) {
        return Ok(None);
    }
    Ok(Some(FailedCheck {
        name: check.name.clone(),
        exit_code: exit.code,
        timed_out,
        tail: tail(&capture.last()),
    }))
}

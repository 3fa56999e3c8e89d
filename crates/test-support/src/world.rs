//! A test world: a repository, a HOME, and `ganger` run inside them with a clean environment.

use crate::trees::{has_trees, trees_on};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// What a `ganger` run printed and how it exited.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs `command` for at most `limit`: a command still running then is killed and is a
    /// run of code -2 (so a test of something that must not hang fails rather than hangs).
    /// Returns how long it ran as well.
    pub fn within(mut command: Command, limit: std::time::Duration) -> (Run, std::time::Duration) {
        let began = std::time::Instant::now();
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        #[expect(
            clippy::disallowed_methods,
            reason = "the command under test, run as a user runs it, with a limit"
        )]
        let mut child = command.spawn().unwrap();
        let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let read = |mut stream: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut all = Vec::new();
                let _ = stream.read_to_end(&mut all);
                String::from_utf8_lossy(&all).into_owned()
            })
        };
        let (out, err) = (read(Box::new(stdout)), read(Box::new(stderr)));
        let code = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status.code().unwrap_or(-1);
            }
            if began.elapsed() >= limit {
                let _ = child.kill();
                let _ = child.wait();
                break -2;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let took = began.elapsed();
        // A killed command's children may hold its pipes open: what they printed is read
        // only if its readers are done within a moment.
        let joined = |reader: std::thread::JoinHandle<String>| {
            let waited = std::time::Instant::now();
            while !reader.is_finished() && waited.elapsed() < std::time::Duration::from_secs(2) {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if reader.is_finished() {
                reader.join().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let mut stderr = joined(err);
        if code == -2 {
            stderr.push_str(&format!("\n(killed: still running after {limit:?})"));
        }
        let run = Run {
            code,
            stdout: joined(out),
            stderr,
        };
        (run, took)
    }

    /// The stdout as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Panics with everything printed unless the exit code is `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code {} instead of {code}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
}

/// A temporary repository with a private HOME.
#[derive(Debug)]
pub struct World {
    dir: tempfile::TempDir,
    /// The main checkout (`<tmp>/repo`).
    pub repo: PathBuf,
    /// HOME for ganger and its agents.
    pub home: PathBuf,
    pub(crate) ganger: PathBuf,
    /// The unprivileged user (uid, gid) its ganger and git run as, when not the test's own
    /// ([`World::as_user`]).
    pub(crate) user: Option<(u32, u32)>,
}

/// Variables a test run never inherits.
const SCRUBBED: [&str; 7] = [
    "GANGER_COMMANDER",
    "GANGER_STORE",
    "OPENCODE_CONFIG_CONTENT",
    "OPENCODE_CONFIG",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "NO_COLOR",
];

impl Drop for World {
    /// Stops whatever the world left running (a round host of a test that failed half way, its
    /// agent, a server), so that one failure does not leave processes loading the machine for
    /// every test after it.
    fn drop(&mut self) {
        for _ in 0..50 {
            let left = self.left_running();
            if left.is_empty() {
                break;
            }
            for pid in left {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // What is still mounted in it (a task's overlay, docs/trees.md, that no `clean` took):
        // detached, so that its directory can go and no mount outlives the test.
        for mount in mounts_under(self.dir.path()) {
            let _ = Command::new("umount").arg("-l").arg(mount).output();
        }
    }
}

/// The mount points under `dir`, deepest first.
fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut found: Vec<PathBuf> = text
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(field.replace("\\040", " ")))
        .filter(|mount| mount.starts_with(dir))
        .collect();
    found.sort_by_key(|mount| std::cmp::Reverse(mount.components().count()));
    found
}

impl World {
    /// A repository on `main` with one commit (`README.md`), and `ganger` at `ganger`.
    pub fn new(ganger: &Path) -> World {
        World::new_in(ganger, &std::env::temp_dir())
    }

    /// The same, with everything in a new directory under `parent` (a file system a test
    /// made: an XFS image, a small tmpfs).
    pub fn new_in(ganger: &Path, parent: &Path) -> World {
        let dir = tempfile::Builder::new()
            .prefix("ganger-test-")
            .tempdir_in(parent)
            .unwrap();
        let repo = dir.path().join("repo");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        // `GANGER_TEST_BIN` runs the tests against another build (an older one, to see a
        // regression test fail before its fix).
        let ganger = std::env::var_os("GANGER_TEST_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| ganger.to_path_buf());
        let world = World {
            dir,
            repo,
            home,
            ganger,
            user: None,
        };
        world.git(&["init", "-q", "-b", "main"]);
        world.write("README.md", "# test repository\n");
        world.git(&["add", "-A"]);
        world.git(&["commit", "-q", "-m", "initial"]);
        world
    }

    /// The temporary directory holding everything.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The live processes the world started that still run: round hosts, agents, servers
    /// (the processes working inside its directory or carrying its `HOME`).
    pub fn left_running(&self) -> Vec<i32> {
        let marker = format!("HOME={}", self.home.display());
        crate::processes::pids_of_world(self.dir.path(), &marker)
    }

    /// The temporary directory (`TMPDIR`) of every process of the world.
    pub fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    /// The environment every process of the world gets.
    pub fn env(&self, command: &mut Command) {
        for var in SCRUBBED {
            command.env_remove(var);
        }
        // The ganger under test is the one on PATH, as an installed one is: what ganger writes
        // for others to run (a supervisor's `ganger mcp`) finds it there.
        if let Some(dir) = self.ganger.parent() {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let dirs = std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&path));
            if let Ok(joined) = std::env::join_paths(dirs) {
                command.env("PATH", joined);
            }
        }
        command
            .env("HOME", &self.home)
            // What ganger and the agents write to their temporary directory stays in the
            // world's, where a test can see what was left.
            .env("TMPDIR", self.tmp())
            // Tests send traffic to loopback only. OpenCode installs its plugin package from
            // the npm registry into every config directory that lacks it, in the background of
            // any run (docs/agents/opencode-measured.md); a world's is always new. Offline, npm
            // fails at once and OpenCode goes on as without it.
            .env("npm_config_offline", "true")
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test")
            .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test")
            .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
            .env("USER", "tester")
            .env("LC_ALL", "C");
    }

    /// Runs git in the main checkout; panics on failure.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.repo, args)
    }

    /// Runs git in `dir`; panics on failure.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let mut command = self.program(Path::new("git"));
        command.arg("-C").arg(dir).args(args);
        self.env(&mut command);
        let output = command.output().unwrap();
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .trim_end()
            .to_owned()
    }

    /// Writes a file of the main checkout (a `ganger.toml` with the `[trees]` of
    /// [`crate::TREES_ENV`] added when that is set and it has none).
    pub fn write(&self, relative: &str, content: &str) {
        let path = self.repo.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let content = match trees_on() {
            Some(trees) if relative == "ganger.toml" && !has_trees(content) => {
                format!("{content}\n[trees]\n{trees}\n")
            }
            _ => content.to_owned(),
        };
        std::fs::write(&path, content).unwrap();
        self.own(&path);
    }

    /// A `ganger` command run in the main checkout. With [`crate::TREES_ENV`] set, a `ganger.toml`
    /// the test wrote by other means than [`World::write`] gets its `[trees]` first.
    pub fn command(&self, args: &[&str]) -> Command {
        if let Some(trees) = trees_on() {
            let toml = self.repo.join("ganger.toml");
            if let Ok(content) = std::fs::read_to_string(&toml)
                && !has_trees(&content)
            {
                std::fs::write(&toml, format!("{content}\n[trees]\n{trees}\n")).unwrap();
            }
        }
        let mut command = self.program(&self.ganger);
        command
            .args(args)
            .current_dir(&self.repo)
            .stdin(Stdio::null());
        self.env(&mut command);
        command
    }

    /// Runs `ganger` to completion.
    pub fn ganger(&self, args: &[&str]) -> Run {
        Run::from(self.command(args).output().unwrap())
    }

    /// Configures the stand-in `opencode` as the agent, with `defaults` added to `[defaults]`
    /// and `extra` appended. Its rounds are cold (`[warm] default = false`): the stand-in
    /// speaks no ACP, so OpenCode's warm default would fail before every round.
    pub fn use_fake_agent(&self, defaults: &str, extra: &str) {
        let program = crate::agents::write_fake_opencode(self.root());
        self.write(
            "ganger.toml",
            &format!(
                "[defaults]\nmodel = \"mock/scripted\"\n{defaults}\n\n[warm]\ndefault = false\n\n\
                 [agents.opencode]\ncommand = {}\n{extra}\n",
                serde_json::to_string(&program.to_string_lossy()).unwrap()
            ),
        );
    }

    /// Configures the `command` agent (text format) as `sh -c SCRIPT`, with `extra` appended
    /// to `[agents.command]` and `defaults` to `[defaults]`.
    pub fn use_command_agent(&self, script: &str, defaults: &str, extra: &str) {
        self.write(
            "ganger.toml",
            &format!(
                "[defaults]\nagent = \"command\"\n{defaults}\n\n[agents.command]\n\
                 argv = [\"sh\", \"-c\", {script}]\nformat = \"text\"\n{extra}\n",
                script = serde_json::to_string(script).unwrap()
            ),
        );
    }

    /// The `ganger` binary this world runs.
    pub fn ganger_path(&self) -> &Path {
        &self.ganger
    }

    /// The worktree ganger makes for `slug` by default.
    pub fn worktree(&self, slug: &str) -> PathBuf {
        self.root().join(format!("repo-agent-{slug}"))
    }

    /// Every file under `.ganger/` and the worktrees, with its content (for secrets checks).
    pub fn everything_written(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut found = Vec::new();
        let mut stack = vec![self.repo.join(".ganger")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(bytes) = std::fs::read(&path) {
                    found.push((path, bytes));
                }
            }
        }
        found
    }
}

//! The scenarios, each a function of the sandbox and the agent's dialect.

use crate::dialect::Dialect;
use ganger_fake_llm::{FakeLlm, Fault, Script, Turn};
use ganger_test_support::{World, agent_toml, living_pids_with_env, wait_until};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const LIMITS: &str = "timeout = \"150s\"\nstall = \"30s\"";
/// What the key file holds: it must never reach the model.
const KEY: &str = "sk-extra-4f1c9d2e7b";
/// The key every agent's scripted set-up passes (`ganger_agents::*::scripted_endpoint`).
const SCRIPTED_KEY: &str = "scripted-model-key";
/// What another task's worktree holds: the worker must not read it.
const OTHER: &str = "other-worktree-9a7c";

pub(crate) struct Setup {
    pub world: World,
    pub llm: FakeLlm,
}

/// Builds the worker image a docker test needs (once per machine, under a lock).
fn image_for(sandbox: &str, agent: &str) {
    if sandbox == "docker" {
        ganger_test_support::ensure_worker_image(env!("CARGO_BIN_EXE_ganger").as_ref(), agent);
    }
}

pub(crate) fn setup(d: Dialect, sandbox: &str, script: impl FnOnce(&Path) -> Script) -> Setup {
    image_for(sandbox, d.agent);
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let llm = FakeLlm::start(script(world.root())).unwrap();
    let mut extra = format!("\n[sandbox]\ndefault = {sandbox:?}\n");
    extra.push_str(if d.warm {
        "\n[warm]\ndefault = true\n"
    } else {
        "\n[warm]\ndefault = false\n"
    });
    world.write(
        "ganger.toml",
        &agent_toml(d.agent, &llm.root_url(), LIMITS, &extra),
    );
    Setup { world, llm }
}

pub(crate) fn start(s: &Setup, slug: &str, message: &str, extra: &[&str]) -> Value {
    let mut args = vec!["start", slug, "--message", message, "--json"];
    args.extend_from_slice(extra);
    let run = s.world.ganger(&args);
    let report = run.json();
    assert!(
        report["schema"] == "ganger.round-report/1",
        "{report:#}\nstderr:\n{}",
        run.stderr
    );
    report
}

/// Everything the agent sent the model, as one text (tool results included).
pub(crate) fn sent_text(llm: &FakeLlm) -> String {
    llm.requests()
        .iter()
        .map(|r| {
            r.body
                .as_ref()
                .map(Value::to_string)
                .or_else(|| r.body_text.clone())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A round writes in the worktree while its writes elsewhere fail, a fix resumes the session,
/// and the worker cannot read the main `.git`, another worktree or the key file.
pub fn round_fix_and_confinement(sandbox: &str, d: Dialect) {
    let test = format!("{sandbox}::{}::round_fix_and_confinement", d.agent);
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    let usr_escape = format!("/usr/local/ganger-escape-{}", std::process::id());
    let s = setup(d, sandbox, |root| {
        let worktree = root.join("repo-agent-t1");
        let main = root.join("repo");
        let probe = format!(
            "cat {main}/.git/HEAD || echo NO-MAIN-GIT; cat {other}/secret.txt || echo NO-OTHER-WORKTREE; cat {key}; cat /run/ganger/env || echo NO-ENV-FILE; git -C {wt} log -1 || echo NO-GIT-HERE; echo END-OF-PROBE",
            main = main.display(),
            other = root.join("other").display(),
            key = root.join("keys/extra.key").display(),
            wt = worktree.display(),
        );
        let escape = format!(
            "echo x > {main}/escape-shell.txt; echo x > {usr_escape}; echo ESCAPES-TRIED",
            main = main.display(),
        );
        Script::new()
            .turn(
                d.write(&worktree, "round1.txt", "round 1\n")
                    .when("first file"),
            )
            .turn(d.write(&main, "escape-tool.txt", "escaped\n"))
            .turn(d.shell(&escape))
            .text("Done round 1. {{history}}")
            .turn(d.shell(&probe).when("look around"))
            .text("Done round 2. {{history}}")
    });
    let root = s.world.root().to_path_buf();
    std::fs::create_dir_all(root.join("keys")).unwrap();
    std::fs::write(root.join("keys/extra.key"), format!("{KEY}\n")).unwrap();
    s.world
        .git(&["worktree", "add", "-q", "-b", "other", "../other"]);
    std::fs::write(root.join("other/secret.txt"), OTHER).unwrap();
    let key_arg = format!("extra={}", root.join("keys/extra.key").display());
    let first = start(
        &s,
        "t1",
        "Write the first file, round1.txt, then say done.",
        &["--key", &key_arg],
    );
    assert_eq!(first["status"], "done", "{first:#}");
    // The default network: the model is reached through the round's gateway only.
    assert_eq!(first["network"], "gateway", "{first:#}");
    assert!(
        first["gateway"]["requests"].as_u64().unwrap_or(0) >= 1,
        "the model was not reached through the gateway: {first:#}"
    );
    let worktree = s.world.worktree("t1");
    assert_eq!(
        std::fs::read_to_string(worktree.join("round1.txt")).unwrap(),
        "round 1\n"
    );
    for escaped in [
        s.world.repo.join("escape-tool.txt"),
        s.world.repo.join("escape-shell.txt"),
        Path::new(&usr_escape).to_path_buf(),
    ] {
        assert!(!escaped.exists(), "{} was written", escaped.display());
    }
    assert!(
        sent_text(&s.llm).contains("ESCAPES-TRIED"),
        "the shell never ran"
    );
    let second = s
        .world
        .ganger(&["fix", "t1", "--message", "Now look around.", "--json"])
        .json();
    assert_eq!(second["status"], "done", "{second:#}");
    assert_eq!(second["session"], first["session"]);
    let sent = sent_text(&s.llm);
    assert!(sent.contains("END-OF-PROBE"), "the probe never ran");
    for marker in [
        "NO-MAIN-GIT",
        "NO-OTHER-WORKTREE",
        "NO-ENV-FILE",
        "NO-GIT-HERE",
    ] {
        assert!(
            sent.contains(marker),
            "{marker} missing: the worker read it"
        );
    }
    assert!(!sent.contains(OTHER), "the worker read another worktree");
    assert!(!sent.contains(KEY), "the worker read the key file");
    assert!(
        !sent.contains("ref: refs/heads/main"),
        "the worker read the main .git"
    );
    if d.warm {
        // Both rounds went to the warm agent, which ran in the sandbox (another mount
        // namespace than ours: bubblewrap's, or the container's).
        for round in [1, 2] {
            let stream = std::fs::read_to_string(
                s.world
                    .root()
                    .join(format!("repo/.ganger/tasks/t1/round-{round}.jsonl")),
            )
            .unwrap();
            let opening = stream.lines().next().unwrap_or_default();
            assert!(
                opening.contains(r#""ganger":"turn""#),
                "round {round} did not run warm: {opening:.300}"
            );
        }
        let listed = s.world.ganger(&["warm", "list", "--json"]).json();
        let token = listed["agents"][0]["token"].as_str().unwrap().to_owned();
        let marker = format!("GANGER_ROUND={token}");
        let namespace = |pid: &str| std::fs::read_link(format!("/proc/{pid}/ns/mnt")).ok();
        let comm =
            |pid: i32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        // Not the sandbox's own launcher: bubblewrap, or ganger's shim that runs the container.
        let agent: Vec<i32> = ganger_test_support::living_pids_with_env(&marker)
            .into_iter()
            .filter(|pid| !["bwrap", "ganger"].contains(&comm(*pid).trim()))
            .collect();
        assert!(!agent.is_empty(), "no process of the warm agent");
        for pid in agent {
            assert_ne!(
                namespace(&pid.to_string()),
                namespace("self"),
                "the warm agent's {} runs outside the sandbox",
                comm(pid).trim()
            );
        }
        s.world.ganger(&["warm", "stop", "--all"]).expect_code(0);
        assert_nothing_left(sandbox, &token, "the stopped warm agent");
    }
    // A docker round's variables file lives on /dev/shm only while its round starts.
    for report in [&first, &second] {
        let dir = format!("/dev/shm/ganger-{}", report["token"].as_str().unwrap());
        assert!(!Path::new(&dir).exists(), "{dir} outlived its round");
    }
}

/// Read-only in a sandbox: the worktree itself is mounted read-only, so the model's writes
/// through the file tool and the shell leave no file, whatever the agent's own settings do.
pub fn read_only_worktree(sandbox: &str, d: Dialect) {
    let test = format!("{sandbox}::{}::read_only_worktree", d.agent);
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    let s = setup(d, sandbox, |root| {
        let worktree = root.join("repo-agent-ro");
        Script::new()
            .turn(d.write(&worktree, "by-tool.txt", "written\n"))
            .turn(d.shell("echo written > by-shell.txt; echo SHELL-RAN"))
            .text("I tried.")
            .default_answer("read-only")
    });
    let report = start(
        &s,
        "ro",
        "Try to write files.",
        &["--permission", "read-only"],
    );
    assert_ne!(report["status"], "running", "{report:#}");
    let worktree = s.world.worktree("ro");
    assert!(worktree.is_dir(), "{report:#}");
    for name in ["by-tool.txt", "by-shell.txt"] {
        assert!(
            !worktree.join(name).exists(),
            "{name} was written: {report:#}"
        );
        assert!(!s.world.repo.join(name).exists());
    }
}

/// A cancelled round leaves no process (and no container) behind.
pub fn cancel_leaves_nothing(sandbox: &str, d: Dialect) {
    let test = format!("{sandbox}::{}::cancel_leaves_nothing", d.agent);
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    let s = setup(d, sandbox, |_| Script::new().turn(Turn::fault(Fault::Hang)));
    s.world
        .ganger(&["start", "c1", "--message", "Work for long.", "--detach"])
        .expect_code(0);
    assert!(
        wait_until(Duration::from_secs(90), || !s.llm.requests().is_empty()),
        "the agent never reached the model"
    );
    let running = s.world.ganger(&["status", "c1", "--json"]).json();
    assert_eq!(running["status"], "running", "{running:#}");
    if sandbox == "docker" {
        let token = running["token"].as_str().unwrap();
        crate::engines::assert_no_key_in_container(&format!("ganger-{token}"), SCRIPTED_KEY);
    }
    s.world.ganger(&["cancel", "c1"]).expect_code(0);
    let report = s
        .world
        .ganger(&["wait", "c1", "--timeout", "60s", "--json"])
        .json();
    assert_eq!(report["status"], "cancelled", "{report:#}");
    let token = running["token"].as_str().unwrap().to_owned();
    assert_nothing_left(sandbox, &token, "the cancelled round");
}

/// No process with `token`'s marker is left within 10 s, nor (in Docker) a container with its
/// label; `whose` names them in the failure.
fn assert_nothing_left(sandbox: &str, token: &str, whose: &str) {
    let marker = format!("GANGER_ROUND={token}");
    assert!(
        wait_until(Duration::from_secs(10), || living_pids_with_env(&marker)
            .is_empty()),
        "processes of {whose} survive: {:?}",
        living_pids_with_env(&marker)
    );
    if sandbox == "docker" {
        let label = format!("ganger.token={token}");
        assert!(
            wait_until(Duration::from_secs(10), || {
                crate::engines::containers_labelled(&label) == 0
            }),
            "{whose}'s container survives"
        );
    }
}

/// Under `--network none` a plain command in the sandbox reaches nothing, not even the
/// host's loopback; under `shared` the same command reaches the model server (so the probe
/// can tell the two apart).
pub fn network_none_reaches_nothing(sandbox: &str) {
    let test = format!("{sandbox}::network_none_reaches_nothing");
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    image_for(sandbox, "command");
    let llm = FakeLlm::start(Script::new()).unwrap();
    let port = llm.root_url().rsplit(':').next().unwrap().to_owned();
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let probe = format!(
        "if (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; then echo REACHED; else echo UNREACHABLE; fi"
    );
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\ntimeout = \"60s\"\n\n[sandbox]\ndefault = {sandbox:?}\n\n[agents.command]\nargv = [\"/bin/bash\", \"-c\", {probe:?}]\nformat = \"text\"\n"
        ),
    );
    let answer = |slug: &str, network: &str| -> String {
        let run = world.ganger(&[
            "start",
            slug,
            "--message",
            "probe",
            "--network",
            network,
            "--json",
        ]);
        let report = run.json();
        assert_eq!(report["status"], "done", "{report:#}\n{}", run.stderr);
        report["answer"].as_str().unwrap_or_default().to_owned()
    };
    let shared = answer("shared", "shared");
    assert!(
        shared.contains("REACHED") && !shared.contains("UNREACHABLE"),
        "{shared}"
    );
    let closed = answer("closed", "none");
    assert!(closed.contains("UNREACHABLE"), "{closed}");
}

/// A round host killed with SIGKILL cannot stop its round: the next ganger command's reaper
/// settles the round, stops its processes and removes its container.
pub fn dead_host_leaves_nothing(sandbox: &str) {
    let test = format!("{sandbox}::dead_host_leaves_nothing");
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    image_for(sandbox, "command");
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\n\n[sandbox]\ndefault = {sandbox:?}\n\n[agents.command]\nargv = [\"/bin/sh\", \"-c\", \"sleep 600\"]\nformat = \"text\"\n"
        ),
    );
    world
        .ganger(&["start", "d1", "--message", "sleep", "--detach"])
        .expect_code(0);
    let running = world.ganger(&["status", "d1", "--json"]).json();
    let token = running["token"].as_str().unwrap().to_owned();
    let marker = format!("GANGER_ROUND={token}");
    let label = format!("ganger.token={token}");
    assert!(
        wait_until(Duration::from_secs(30), || {
            sandbox != "docker" || crate::engines::containers_labelled(&label) == 1
        }),
        "the round's container never ran"
    );
    assert!(wait_until(
        Duration::from_secs(30),
        || living_pids_with_env(&marker).len() > 1
    ));
    let host = running["host_pid"].as_i64().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &host.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let settled = wait_until(Duration::from_secs(30), || {
        world.ganger(&["status", "d1", "--json"]).json()["status"] != "running"
    });
    assert!(settled, "the dead host's round was never settled");
    let report = world.ganger(&["status", "d1", "--json"]).json();
    assert_eq!(report["status"], "interrupted", "{report:#}");
    assert!(
        wait_until(Duration::from_secs(15), || living_pids_with_env(&marker)
            .is_empty()),
        "processes of the dead host's round survive: {:?}",
        living_pids_with_env(&marker)
    );
    if sandbox == "docker" {
        assert!(
            wait_until(Duration::from_secs(15), || {
                crate::engines::containers_labelled(&label) == 0
            }),
            "the dead host's container survives"
        );
    }
}

/// Checks run in the task's sandbox: a check that passes only where the main checkout's `.git`
/// is out of sight passes in the sandbox and fails locally (which shows it can fail); it sees
/// the worker's file and its output is kept.
pub fn checks_run_in_the_sandbox(sandbox: &str) {
    let test = format!("{sandbox}::checks_run_in_the_sandbox");
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    image_for(sandbox, "command");
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let main_git = world.repo.join(".git/HEAD");
    let check = format!(
        "test -f made.txt && echo the worker made its file && if test -e {0}; then echo {0} is visible; exit 1; fi",
        main_git.display()
    );
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\ntimeout = \"60s\"\n\n[sandbox]\ndefault = {sandbox:?}\n\n\
             [agents.command]\nargv = [\"/bin/bash\", \"-c\", \"echo made > made.txt; echo made it\"]\nformat = \"text\"\n\n\
             [[checks]]\nname = \"confined\"\ncommand = {check:?}\n"
        ),
    );
    let run = world.ganger(&["start", "inside", "--message", "make it", "--json"]);
    let report = run.json();
    assert_eq!(report["status"], "done", "{report:#}\n{}", run.stderr);
    assert_eq!(report["checks"][0]["state"], "passed", "{report:#}");
    let log = std::fs::read_to_string(report["checks"][0]["log"].as_str().unwrap()).unwrap();
    assert!(log.contains("the worker made its file"), "{log}");

    let run = world.ganger(&[
        "start",
        "outside",
        "--message",
        "make it",
        "--sandbox",
        "local",
        "--json",
    ]);
    let report = run.json();
    assert_eq!(report["status"], "failed", "{report:#}");
    assert!(
        report["checks"][0]["tail"]
            .as_str()
            .unwrap()
            .ends_with("is visible"),
        "{report:#}"
    );
}

/// A round's containers share its name and follow each other (the agent's, then each check's):
/// the daemon removes an ended one (`AutoRemove`) while the next is made, and a check made
/// during that removal was a false `failed` ("removal of container ... is already in progress
/// (HTTP 409)", seen once in a CI run). Twenty checks in a row each get their container.
pub fn checks_in_a_row_each_get_their_container(sandbox: &str) {
    let test = format!("{sandbox}::checks_in_a_row_each_get_their_container");
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    image_for(sandbox, "command");
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let mut config = format!(
        "[defaults]\nagent = \"command\"\ntimeout = \"120s\"\n\n[sandbox]\ndefault = {sandbox:?}\n\n\
         [agents.command]\nargv = [\"/bin/sh\", \"-c\", \"echo made > made.txt; echo made it\"]\nformat = \"text\"\n"
    );
    for n in 1..=20 {
        config.push_str(&format!(
            "\n[[checks]]\nname = \"check-{n}\"\ncommand = \"test -f made.txt\"\n"
        ));
    }
    world.write("ganger.toml", &config);
    let run = world.ganger(&["start", "row", "--message", "make it", "--json"]);
    let report = run.json();
    let states: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["passed"; 20], "{report:#}\n{}", run.stderr);
    assert_eq!(report["status"], "done", "{report:#}");
}

/// Issue 13.5: an agent's own session store (in a sandboxed task's home) kept what its tools
/// printed, the key included, in files any user could read, and `clean` left it.
pub fn the_agent_home_is_private_and_goes_with_clean(sandbox: &str) {
    use std::os::unix::fs::PermissionsExt;
    let test = format!("{sandbox}::the_agent_home_is_private_and_goes_with_clean");
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let key = "sk-agent-home-0123456789";
    let key_file = world.root().join("key");
    std::fs::write(&key_file, key).unwrap();
    // Like an agent that saves a tool's output in its session store.
    let script = "cat >/dev/null; mkdir -p \"$HOME/.local/share/agent\"; \
                  echo \"$MOCK_API_KEY\" > \"$HOME/.local/share/agent/session.json\"; echo 'DONE: ok'";
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\n\n[sandbox]\ndefault = {sandbox:?}\n\n\
             [agents.command]\nargv = [\"/bin/sh\", \"-c\", {script}]\nformat = \"text\"\n",
            script = serde_json::to_string(script).unwrap()
        ),
    );
    let key_arg = format!("mock={}", key_file.display());
    world
        .ganger(&["start", "h", "--message", "hi", "--key", &key_arg])
        .expect_code(0);
    let home = world.repo.join(".ganger/tasks/h/agent");
    let stored = home.join(".local/share/agent/session.json");
    assert!(
        std::fs::read_to_string(&stored).unwrap().contains(key),
        "the agent's store in its home does not hold what its tool printed"
    );
    let mode = std::fs::metadata(&home).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the agent home is {mode:o}");
    world.ganger(&["clean", "h", "--force"]).expect_code(0);
    assert!(!home.exists(), "clean left the agent home");
    for (path, bytes) in world.everything_written() {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(key),
            "the key is in {}",
            path.display()
        );
    }
}

/// A web server on `ip` answering every request with `answer`; its port, and a count of the
/// requests it got.
fn web_server(
    ip: &str,
    answer: &'static str,
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind((ip, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
            }
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (port, hits)
}

/// Under `--network gateway` (the default) a plain command in the sandbox reaches an allowed
/// host through the gateway's proxy (with curl, which reads `http_proxy`, where the sandbox
/// has it, else by hand), is refused one not on the list (and the round's report lists the
/// refusal), and reaches nothing directly, not even the host's loopback. The stand-in hosts
/// listen on 127.0.0.2, which `NO_PROXY` does not name.
pub fn network_gateway_reaches_the_allow_list_only(sandbox: &str) {
    let test = format!("{sandbox}::network_gateway_reaches_the_allow_list_only");
    if !crate::engines::available(sandbox, &test) {
        return;
    }
    image_for(sandbox, "command");
    let (allowed, allowed_hits) = web_server("127.0.0.2", "ALLOWED-PAGE");
    let (other, other_hits) = web_server("127.0.0.2", "OTHER-PAGE");
    let (direct, direct_hits) = web_server("127.0.0.1", "DIRECT-PAGE");
    let world = World::new(env!("CARGO_BIN_EXE_ganger").as_ref());
    let probe = format!(
        r#"get() {{ if command -v curl >/dev/null; then curl -s --max-time 10 "http://$1/"; echo " curl:$?";
else p=${{http_proxy##*:}}; exec 3<>/dev/tcp/127.0.0.1/$p || {{ echo " nohttp"; return; }};
printf 'GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$1" "$1" >&3; cat <&3; exec 3>&-; echo; fi; }}
if (exec 3<>/dev/tcp/127.0.0.1/{direct}) 2>/dev/null; then d=REACHED; else d=UNREACHABLE; fi
echo "allowed: $(get 127.0.0.2:{allowed} | tr '\r\n' '  ') | other: $(get 127.0.0.2:{other} | tr '\r\n' '  ') | direct: $d""#
    );
    world.write(
        "ganger.toml",
        &format!(
            "[defaults]\nagent = \"command\"\ntimeout = \"60s\"\n\n[sandbox]\ndefault = {sandbox:?}\n\n[agents.command]\nargv = [\"/bin/bash\", \"-c\", {probe:?}]\nformat = \"text\"\n"
        ),
    );
    // The round's checks go out the same way: through a gateway of their own, to the list.
    let check = format!(
        r#"bash -c 'p=${{http_proxy##*:}}; exec 3<>/dev/tcp/127.0.0.1/$p; printf "GET http://127.0.0.2:{allowed}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" >&3; cat <&3' | grep -q ALLOWED-PAGE"#
    );
    let run = world.ganger(&[
        "start",
        "sealed",
        "--message",
        "probe",
        "--allow",
        &format!("127.0.0.2:{allowed}"),
        "--check",
        &check,
        "--json",
    ]);
    let report = run.json();
    assert_eq!(report["status"], "done", "{report:#}\n{}", run.stderr);
    assert_eq!(report["network"], "gateway", "{report:#}");
    let answer = report["answer"].as_str().unwrap_or_default().to_owned();
    // One line (a text agent's answer is its last): `allowed: … | other: … | direct: …`.
    let line = |name: &str| {
        answer
            .split(" | ")
            .find(|part| part.trim_start().starts_with(&format!("{name}: ")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("allowed").contains("ALLOWED-PAGE"), "{answer}");
    assert!(!line("other").contains("OTHER-PAGE"), "{answer}");
    assert!(line("direct").contains("UNREACHABLE"), "{answer}");
    use std::sync::atomic::Ordering::SeqCst;
    assert_eq!(report["checks"][0]["state"], "passed", "{report:#}");
    assert_eq!(
        allowed_hits.load(SeqCst),
        2,
        "the agent's request and the check's"
    );
    assert_eq!(other_hits.load(SeqCst), 0, "the refused host heard nothing");
    assert_eq!(
        direct_hits.load(SeqCst),
        0,
        "nothing left the sandbox directly"
    );
    let refused = report["gateway"]["refused"].to_string();
    assert!(
        refused.contains(&format!(
            "127.0.0.2:{other} is not on the round's allow-list"
        )),
        "{report:#}"
    );
    let status = world.ganger(&["status", "sealed"]);
    assert!(
        status.stdout.contains(&format!("127.0.0.2:{other}")),
        "{}",
        status.stdout
    );

    // An entry that is not HOST:PORT is bad input: nothing is made.
    let bad = world.ganger(&["start", "bad", "--message", "x", "--allow", "example.org"]);
    bad.expect_code(2);
    assert!(bad.stderr.contains("HOST:PORT"), "{}", bad.stderr);
    let tasks = world.ganger(&["status", "--json"]).json();
    assert!(!tasks.to_string().contains("\"bad\""), "{tasks:#}");
}

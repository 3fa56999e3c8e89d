//! The local sandbox on real processes: explicit environment, stdin, the round's detached
//! children found and stopped, activity measured; an agent started where seccomp refuses
//! `clone3`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_sandbox::{
    Activity, AgentCommand, ProcessId, RunningAgent, marked_processes, round_members, spawn_local,
};
use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

fn command(script: &str, token: &str) -> AgentCommand {
    AgentCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("ONLY_THIS".into(), "1".into()),
        ],
        cwd: std::env::temp_dir(),
        stdin: None,
        token: token.into(),
        use_cgroup: true,
    }
}

/// Everything the agent writes on stdout, to its end.
fn stdout_to_end(agent: &mut RunningAgent) -> String {
    let mut out = String::new();
    agent
        .take_stdout()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    out
}

fn token(name: &str) -> String {
    format!("test-{name}-{}", std::process::id())
}

#[test]
fn the_agent_sees_only_the_environment_it_was_given() {
    let mut cmd = command("", &token("env"));
    cmd.program = "/usr/bin/env".into();
    cmd.args.clear();
    let mut agent = spawn_local(&cmd).unwrap();
    let out = stdout_to_end(&mut agent);
    assert_eq!(agent.wait().code, Some(0));
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    let marker = format!("GANGER_ROUND={}", cmd.token);
    assert_eq!(
        lines,
        [marker.as_str(), "ONLY_THIS=1", "PATH=/usr/bin:/bin"]
    );
}

#[test]
fn the_prompt_reaches_stdin_byte_for_byte() {
    let prompt =
        "  a prompt with \"quotes\", spaces\nand a second line, not trimmed  \n".repeat(5000);
    let mut cmd = command("", &token("stdin"));
    cmd.program = "/bin/cat".into();
    cmd.args.clear();
    cmd.stdin = Some(prompt.clone().into_bytes());
    let mut agent = spawn_local(&cmd).unwrap();
    let out = stdout_to_end(&mut agent);
    assert_eq!(agent.wait().code, Some(0));
    assert_eq!(out, prompt);
}

#[test]
fn detached_children_of_the_round_are_found_and_stopped_with_a_cgroup() {
    detached_children_are_found_and_stopped(true);
}

#[test]
fn detached_children_of_the_round_are_found_and_stopped_by_their_marker() {
    detached_children_are_found_and_stopped(false);
}

fn detached_children_are_found_and_stopped(use_cgroup: bool) {
    // The agent starts a child in a new session (as OpenCode runs its tools' commands).
    let mut cmd = command(
        "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 300",
        &token(&format!("detached-{use_cgroup}")),
    );
    cmd.use_cgroup = use_cgroup;
    let mut agent = spawn_local(&cmd).unwrap();
    assert_eq!(agent.marker.cgroup.is_some(), use_cgroup);
    let mut line = String::new();
    BufReader::new(agent.take_stdout().unwrap())
        .read_line(&mut line)
        .unwrap();
    let detached: i32 = line.trim().parse().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let detached_id = ProcessId {
        pid: detached,
        start_ticks: ganger_sandbox::proc_stat(detached).unwrap().start_ticks,
    };
    let members = round_members(&agent.marker);
    assert!(members.contains(&agent.process.pid), "{members:?}");
    assert!(members.contains(&detached), "{members:?}");
    let exit = agent.stop(Duration::from_secs(2));
    assert_eq!(exit.signal, Some(15));
    assert!(!detached_id.is_alive());
    assert!(round_members(&agent.marker).is_empty());
}

#[test]
fn a_busy_round_shows_activity_and_a_sleeping_one_does_not() {
    let busy = spawn_local(&command(
        "i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done",
        &token("busy"),
    ))
    .unwrap();
    let idle = spawn_local(&command("exec sleep 300", &token("idle"))).unwrap();
    // Starting a process is activity (loading it reads files); measure after that.
    std::thread::sleep(Duration::from_millis(300));
    let busy_before = Activity::sample(&busy.marker);
    let idle_before = Activity::sample(&idle.marker);
    std::thread::sleep(Duration::from_millis(700));
    let busy_after = Activity::sample(&busy.marker);
    let idle_after = Activity::sample(&idle.marker);
    assert!(busy_before.busier(&busy_after, 100_000, u64::MAX));
    assert!(!idle_before.busier(&idle_after, 100_000, 4096));
    let (mut busy, mut idle) = (busy, idle);
    busy.stop(Duration::from_millis(200));
    idle.stop(Duration::from_millis(200));
}

#[test]
fn waiting_returns_at_the_exit_the_wake_or_the_time_limit() {
    use ganger_sandbox::Waited;
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::time::Instant;
    let mut quick = spawn_local(&command("sleep 0.2", &token("quick"))).unwrap();
    let started = Instant::now();
    assert!(matches!(
        quick.wait_timeout(Duration::from_secs(20), None),
        Waited::Exited(_)
    ));
    assert!(started.elapsed() < Duration::from_secs(10));

    let mut slow = spawn_local(&command("exec sleep 300", &token("slow"))).unwrap();
    assert_eq!(
        slow.wait_timeout(Duration::from_millis(50), None),
        Waited::TimedOut
    );
    let (mut writer, reader) = std::os::unix::net::UnixStream::pair().unwrap();
    writer.write_all(b"x").unwrap();
    assert_eq!(
        slow.wait_timeout(Duration::from_secs(20), Some(reader.as_fd())),
        Waited::Woken
    );
    slow.stop(Duration::from_millis(200));
}

#[test]
fn the_agent_is_born_in_its_cgroup_and_a_missing_program_is_a_clear_error() {
    let mut agent = spawn_local(&command("exec sleep 300", &token("born"))).unwrap();
    let cgroup = agent
        .marker
        .cgroup
        .clone()
        .expect("this machine has a writable cgroup v2");
    let own = std::fs::read_to_string(format!("/proc/{}/cgroup", agent.process.pid)).unwrap();
    let name = cgroup
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        own.trim_end().ends_with(&format!("/ganger/{name}")),
        "{own}"
    );
    assert_eq!(cgroup.pids(), [agent.process.pid]);
    agent.stop(Duration::from_millis(200));
    assert!(
        !cgroup.path().exists(),
        "the cgroup is removed with the round"
    );

    let mut missing = command("", &token("missing"));
    missing.program = "/nonexistent/agent".into();
    let error = spawn_local(&missing).unwrap_err();
    assert!(error.to_string().contains("/nonexistent/agent"), "{error}");
    assert!(error.to_string().contains("No such file"), "{error}");
}

#[test]
fn an_agent_dropped_unstopped_takes_its_whole_round_with_it() {
    // The host left early (an error, a panic): nothing of the round may outlive it.
    let cmd = command(
        "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 300",
        &token("dropped"),
    );
    let mut agent = spawn_local(&cmd).unwrap();
    let mut line = String::new();
    BufReader::new(agent.take_stdout().unwrap())
        .read_line(&mut line)
        .unwrap();
    let detached: i32 = line.trim().parse().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let tokens = std::collections::BTreeSet::from([cmd.token.clone()]);
    let found = marked_processes(&tokens);
    assert!(found[&cmd.token].contains(&detached), "{found:?}");
    assert!(found[&cmd.token].contains(&agent.process.pid), "{found:?}");
    let ids: Vec<ProcessId> = [agent.process.pid, detached]
        .iter()
        .map(|&pid| ProcessId {
            pid,
            start_ticks: ganger_sandbox::proc_stat(pid).unwrap().start_ticks,
        })
        .collect();
    drop(agent);
    assert!(ids.iter().all(|id| !id.is_alive()), "{ids:?}");
    assert!(marked_processes(&tokens).is_empty());
}

const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;

/// Refuses `clone3` with ENOSYS on this thread (and the threads and processes it makes).
fn refuse_clone3() {
    let instruction = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    let filter = [
        // The system call's number, at offset 0 of seccomp_data.
        instruction((libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, 0, 0, 0),
        instruction(
            (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
            0,
            1,
            libc::SYS_clone3 as u32,
        ),
        instruction(
            (libc::BPF_RET | libc::BPF_K) as u16,
            0,
            0,
            SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ),
        instruction(
            (libc::BPF_RET | libc::BPF_K) as u16,
            0,
            0,
            SECCOMP_RET_ALLOW,
        ),
    ];
    let program = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: plain prctl calls; the filter outlives them (the kernel copies it).
    unsafe {
        assert_eq!(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
        assert_eq!(
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                std::ptr::addr_of!(program),
            ),
            0,
            "{}",
            std::io::Error::last_os_error()
        );
    }
}

/// An agent starts where a seccomp filter refuses `clone3` as Docker's default profile does
/// (ENOSYS: ganger worker in a container): the test's thread installs such a filter on itself
/// (only this test's thread and what it starts), then starts an agent with a cgroup asked for.
#[test]
fn an_agent_starts_where_seccomp_refuses_clone3() {
    refuse_clone3();
    // SAFETY: the raw system call with no arguments that matter: the filter answers it.
    let refused = unsafe { libc::syscall(libc::SYS_clone3, 0usize, 0usize) };
    assert_eq!(
        (refused, std::io::Error::last_os_error().raw_os_error()),
        (-1, Some(libc::ENOSYS))
    );
    let command = command("echo started", &token("seccomp"));
    let mut agent = spawn_local(&command).unwrap();
    let out = stdout_to_end(&mut agent);
    agent.wait();
    assert_eq!(out, "started\n");
}

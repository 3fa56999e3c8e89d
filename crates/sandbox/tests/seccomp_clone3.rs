//! An agent starts where a seccomp filter refuses `clone3` as Docker's default profile does
//! (ENOSYS): the test's thread installs such a filter on itself, then starts an agent with a
//! cgroup asked for, and the agent runs and answers (ganger worker in a container).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test fails loudly on what it did not expect"
)]

use ganger_sandbox::{AgentCommand, spawn_local};
use std::io::Read;

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

#[test]
fn an_agent_starts_where_seccomp_refuses_clone3() {
    refuse_clone3();
    // SAFETY: the raw system call with no arguments that matter: the filter answers it.
    let refused = unsafe { libc::syscall(libc::SYS_clone3, 0usize, 0usize) };
    assert_eq!(
        (refused, std::io::Error::last_os_error().raw_os_error()),
        (-1, Some(libc::ENOSYS))
    );
    let command = AgentCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), "echo started".into()],
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        cwd: std::env::temp_dir(),
        stdin: None,
        token: format!("test-seccomp-{}", std::process::id()),
        use_cgroup: true,
    };
    let mut agent = spawn_local(&command).unwrap();
    let mut out = String::new();
    agent
        .take_stdout()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    agent.wait();
    assert_eq!(out, "started\n");
}

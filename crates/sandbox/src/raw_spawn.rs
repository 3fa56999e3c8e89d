//! Starting an agent with `clone3`, straight into its cgroup (`CLONE_INTO_CGROUP`, Linux 5.7).
//!
//! Moving a process into a cgroup after it started (writing `cgroup.procs`) makes the kernel
//! wait for an RCU grace period: 6 to 20 ms here, on every round's critical path. A child
//! created inside the cgroup costs nothing extra, and no process of the round can ever run
//! outside it. `std::process::Command` cannot do this, so the child side is written here:
//! between `clone3` and `execve` it only makes system calls on memory prepared before the
//! clone (no allocation, no lock), as `fork` requires in a multi-threaded program. Where a
//! seccomp filter refuses `clone3` (Docker's default profile), the child is made by `clone`
//! instead, outside any cgroup of its own.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

const CLONE_PIDFD: u64 = 0x1000;
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// The kernel's `struct clone_args` (version 2, 88 bytes).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// What to start, prepared as C strings before the clone.
pub(crate) struct Prepared {
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: CString,
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in an argument"))
}

impl Prepared {
    pub(crate) fn new<'a>(
        program: &Path,
        args: impl IntoIterator<Item = &'a OsStr>,
        env: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>,
        cwd: &Path,
    ) -> io::Result<Prepared> {
        let program = c_string(program.as_os_str().as_bytes())?;
        let mut argv = vec![program.clone()];
        for arg in args {
            argv.push(c_string(arg.as_bytes())?);
        }
        let mut envp = Vec::new();
        for (key, value) in env {
            let mut entry = key.as_bytes().to_vec();
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            envp.push(c_string(&entry)?);
        }
        Ok(Prepared {
            program,
            argv,
            envp,
            cwd: c_string(cwd.as_os_str().as_bytes())?,
        })
    }
}

/// A child started by [`spawn`].
pub(crate) struct RawChild {
    pub pid: i32,
    pub pidfd: Option<OwnedFd>,
    pub stdin: Option<File>,
    pub stdout: File,
    pub stderr: File,
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are fresh descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The child's side: only async-signal-safe system calls on prepared memory; never returns.
///
/// # Safety
/// Must be called only in the child of `clone3`, with every pointer valid in the copied
/// address space.
unsafe fn child(
    prepared_argv: &[*const libc::c_char],
    prepared_envp: &[*const libc::c_char],
    prepared: &Prepared,
    stdio: [RawFd; 3],
    error: RawFd,
    parent: libc::pid_t,
) -> ! {
    let fail = |error_fd: RawFd| -> ! {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        let bytes = errno.to_ne_bytes();
        // SAFETY: writing 4 bytes from a stack buffer, then exiting without unwinding.
        unsafe {
            libc::write(error_fd, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(127)
        }
    };
    // SAFETY: plain system calls on descriptors and strings prepared before the clone.
    unsafe {
        for (target, source) in stdio.iter().enumerate() {
            let target = target as RawFd;
            // dup2 onto itself would keep close-on-exec; clear it instead.
            let done = if *source == target {
                libc::fcntl(target, libc::F_SETFD, 0)
            } else {
                libc::dup2(*source, target)
            };
            if done < 0 {
                fail(error);
            }
        }
        if libc::chdir(prepared.cwd.as_ptr()) != 0 {
            fail(error);
        }
        if libc::setsid() < 0 {
            fail(error);
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
            fail(error);
        }
        // The parent may have died before the death signal was armed.
        if libc::getppid() != parent {
            libc::_exit(127);
        }
        // Ganger ignores SIGPIPE and may have handlers; the agent starts with defaults.
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::execve(
            prepared.program.as_ptr(),
            prepared_argv.as_ptr(),
            prepared_envp.as_ptr(),
        );
        fail(error)
    }
}

/// Whether clone3 failed as a seccomp filter that does not know it fails it.
fn clone3_refused(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::ENOSYS | libc::EPERM))
}

/// Starts `prepared` in a new session, with a parent-death signal, piped stdio (stdin from a
/// pipe when `with_stdin`, else /dev/null), inside the cgroup whose directory `cgroup` is.
pub(crate) fn spawn(
    prepared: &Prepared,
    cgroup: Option<&OwnedFd>,
    with_stdin: bool,
) -> io::Result<RawChild> {
    let (stdin_read, stdin_write) = if with_stdin {
        let (read, write) = pipe()?;
        (read, Some(write))
    } else {
        (OwnedFd::from(File::open("/dev/null")?), None)
    };
    let (stdout_read, stdout_write) = pipe()?;
    let (stderr_read, stderr_write) = pipe()?;
    let (error_read, error_write) = pipe()?;
    let argv: Vec<*const libc::c_char> = prepared
        .argv
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp: Vec<*const libc::c_char> = prepared
        .envp
        .iter()
        .map(|e| e.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let mut pidfd: RawFd = -1;
    let mut args = CloneArgs {
        flags: CLONE_PIDFD,
        pidfd: std::ptr::addr_of_mut!(pidfd) as u64,
        exit_signal: libc::SIGCHLD as u64,
        ..CloneArgs::default()
    };
    if let Some(cgroup) = cgroup {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = cgroup.as_raw_fd() as u64;
    }
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let stdio = [
        stdin_read.as_raw_fd(),
        stdout_write.as_raw_fd(),
        stderr_write.as_raw_fd(),
    ];
    let error_fd = error_write.as_raw_fd();
    // SAFETY: clone3 without CLONE_VM copies the address space like fork; the child runs only
    // `child`, which never returns.
    let mut pid = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            std::ptr::addr_of_mut!(args),
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if pid < 0 && cgroup.is_none() && clone3_refused(&io::Error::last_os_error()) {
        // A seccomp filter that knows no clone3 (Docker's default profile: a worker in a
        // container) answers ENOSYS or EPERM; the older clone takes CLONE_PIDFD too (5.2),
        // storing the descriptor at its parent_tid argument, the third on every architecture.
        // SAFETY: as clone3 above, without CLONE_VM and with no new stack: a fork.
        pid = unsafe {
            libc::syscall(
                libc::SYS_clone,
                CLONE_PIDFD | libc::SIGCHLD as u64,
                0usize,
                std::ptr::addr_of_mut!(pidfd),
                0usize,
                0usize,
            )
        };
    }
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: this is the child of the clone above.
        unsafe { child(&argv, &envp, prepared, stdio, error_fd, parent) }
    }
    drop(error_write);
    drop(stdin_read);
    drop(stdout_write);
    drop(stderr_write);
    // SAFETY: with CLONE_PIDFD the kernel stored a new descriptor in pidfd.
    let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
    let mut errno = [0u8; 4];
    let mut error_file = File::from(error_read);
    match error_file.read(&mut errno) {
        // End of file: the pipe closed on exec, the program runs.
        Ok(0) => {}
        Ok(_) => {
            let mut status = 0;
            // SAFETY: reaping our own child, which has exited.
            unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
            return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
        }
        Err(e) => return Err(e),
    }
    Ok(RawChild {
        pid: pid as i32,
        pidfd,
        stdin: stdin_write.map(File::from),
        stdout: File::from(stdout_read),
        stderr: File::from(stderr_read),
    })
}

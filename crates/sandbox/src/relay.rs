//! The relay inside a sandbox whose only way out is the model gateway (`--network gateway`,
//! docs/gateway.md): it listens on the loopback port the agent was told, carries each
//! connection to the gateway's unix socket bound into the sandbox, runs the agent as its
//! child with the same standard streams, passes it SIGTERM, SIGINT and SIGHUP, and ends with
//! it (its exit status, or 128 + the signal that ended it). bubblewrap runs it as ganger's own
//! `gateway-relay`; a Docker image runs [`RELAY_JS`] in its Node, since the host's program may
//! not run on the image's C library.

use std::ffi::OsString;
use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Where a sandbox finds the gateway's socket (bubblewrap: on its own `/tmp`; Docker: a mount).
pub const RELAY_SOCKET_IN_SANDBOX: &str = "/tmp/.ganger-gateway.sock";
/// Connections the relay carries at once; more are closed at once.
const MAX_CONNECTIONS: usize = 256;
/// The relay's exit status when it cannot start (its port, or the agent's program).
const RELAY_FAILED: i32 = 125;

/// The model gateway's way into a sandbox whose network is `gateway`: its unix socket on this
/// host, and the loopback port the agent's settings name (the relay listens on it inside).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayDoor {
    pub socket: PathBuf,
    pub port: u16,
}

/// The same relay in Node, for a Docker image: `node -e RELAY_JS PORT SOCKET PROGRAM ARGS...`.
pub const RELAY_JS: &str = r#"const net=require('net'),cp=require('child_process'),os=require('os');
const [port,sock,prog,...args]=process.argv.slice(1);let open=0;
const server=net.createServer(c=>{if(open>=256){c.destroy();return;}open++;
const u=net.connect(sock);c.pipe(u);u.pipe(c);
const end=()=>{c.destroy();u.destroy();};c.on('error',end);u.on('error',end);c.on('close',()=>{open--;u.end();});});
server.on('error',e=>{process.stderr.write('ganger relay: 127.0.0.1:'+port+': '+e.message+'\n');process.exit(125);});
server.listen(+port,'127.0.0.1',()=>{const child=cp.spawn(prog,args,{stdio:'inherit'});
for(const s of ['SIGTERM','SIGINT','SIGHUP'])process.on(s,()=>child.kill(s));
child.on('error',e=>{process.stderr.write('ganger relay: '+prog+': '+e.message+'\n');process.exit(125);});
child.on('exit',(code,sig)=>process.exit(code===null?128+(os.constants.signals[sig]||9):code));});"#;

/// Runs `program` with `args` behind a relay from `127.0.0.1:port` to `socket`; returns the
/// exit status for the relay's own.
pub fn run_relay(port: u16, socket: &Path, program: &OsString, args: &[OsString]) -> i32 {
    let mut stderr = std::io::stderr();
    let listener = match TcpListener::bind(("127.0.0.1", port)) {
        Ok(listener) => listener,
        Err(e) => {
            let _ = writeln!(stderr, "ganger relay: 127.0.0.1:{port}: {e}");
            return RELAY_FAILED;
        }
    };
    // Blocked here, in every thread started after, and waited for by one of them; the
    // child starts with none blocked.
    let signals = forwarded_signals();
    block(&signals);
    #[expect(
        clippy::disallowed_methods,
        reason = "the relay's child is the agent inside the sandbox the round host confined"
    )]
    let spawned = std::process::Command::new(program).args(args).spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let _ = writeln!(stderr, "ganger relay: {}: {e}", program.to_string_lossy());
            return RELAY_FAILED;
        }
    };
    let pid = child.id() as i32;
    std::thread::spawn(move || pass_signals(signals, pid));
    let socket = socket.to_path_buf();
    std::thread::spawn(move || accept(listener, socket));
    match child.wait() {
        Ok(status) => status
            .code()
            .or_else(|| status.signal().map(|s| 128 + s))
            .unwrap_or(RELAY_FAILED),
        Err(_) => RELAY_FAILED,
    }
}

fn forwarded_signals() -> libc::sigset_t {
    // SAFETY: a zeroed sigset_t is filled by sigemptyset before use; the calls only write it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

fn block(set: &libc::sigset_t) {
    // SAFETY: `set` is a valid, initialised signal set; the old mask is not asked for.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, set, std::ptr::null_mut());
    }
}

/// Waits for the blocked signals and sends each to the agent.
fn pass_signals(set: libc::sigset_t, pid: i32) {
    loop {
        let mut signal: libc::c_int = 0;
        // SAFETY: `set` is initialised and `signal` is a valid place for the answer.
        let waited = unsafe { libc::sigwait(&set, &mut signal) };
        if waited == 0 {
            // SAFETY: kill with a pid and a signal number has no memory effects.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
}

fn accept(listener: TcpListener, socket: PathBuf) {
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(client) = stream else { continue };
        if open.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
            continue;
        }
        let Ok(gateway) = UnixStream::connect(&socket) else {
            continue;
        };
        open.fetch_add(1, Ordering::Relaxed);
        let open = open.clone();
        std::thread::spawn(move || {
            carry(client, gateway);
            open.fetch_sub(1, Ordering::Relaxed);
        });
    }
}

/// Copies both ways until both sides are done; each side's end is passed on as a half-close.
fn carry(client: TcpStream, gateway: UnixStream) {
    let _ = client.set_nodelay(true);
    let (Ok(mut client_in), Ok(mut gateway_out)) = (client.try_clone(), gateway.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_in, &mut gateway_out);
        let _ = gateway_out.shutdown(Shutdown::Write);
    });
    let (mut gateway_in, mut client_out) = (gateway, client);
    let _ = std::io::copy(&mut gateway_in, &mut client_out);
    let _ = client_out.shutdown(Shutdown::Write);
    let _ = up.join();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::os::unix::net::UnixListener;

    #[test]
    fn a_connection_to_the_port_reaches_the_socket_and_the_agents_status_is_the_relays() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s");
        let server = UnixListener::bind(&socket).unwrap();
        std::thread::spawn(move || {
            for stream in server.incoming() {
                let mut stream = stream.unwrap();
                let mut got = String::new();
                std::io::BufReader::new(stream.try_clone().unwrap())
                    .read_line(&mut got)
                    .unwrap();
                stream.write_all(format!("echo:{got}").as_bytes()).unwrap();
            }
        });
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // The agent: a shell that talks through the relay with bash's /dev/tcp, then exits 7.
        let script = format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port}; printf 'hello\\n' >&3; \
             read -r answer <&3 || exit 1; echo \"$answer\" > {out}; exit 7",
            out = dir.path().join("out").display()
        );
        // The listener is bound before the child starts, so a connect cannot come first.
        let status = run_relay(port, &socket, &"bash".into(), &["-c".into(), script.into()]);
        assert_eq!(status, 7);
        let out = std::fs::read_to_string(dir.path().join("out")).unwrap();
        assert_eq!(out.trim(), "echo:hello");
    }
}

//! The bubblewrap sandbox: the agent command wrapped in `bwrap`, which gives it the host's
//! root read-only (assembled entry by entry where engines mount and unmount, see
//! [`root_binds`]), fresh `/dev`, `/proc` (a pid namespace of its own, so other processes and
//! their environments are out of sight) and `/tmp`, empty directories over the homes and the
//! secrets it must not read (the main repository's `.git`, ganger's state, the other
//! worktrees), and binds back only what the round needs: the worktree (read-write, or
//! read-only for a read-only task), the task's agent state (its sessions), and the agent's
//! installation. It dies with its parent. Measured in docs/agents/bwrap-measured.md.

use crate::local::AgentCommand;
use crate::relay::RELAY_SOCKET_IN_SANDBOX;
use ganger_events::Network;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Files no round may read, covered with `/dev/null` where they exist.
const SECRET_FILES: [&str; 4] = [
    "/etc/shadow",
    "/etc/gshadow",
    "/run/docker.sock",
    "/var/run/docker.sock",
];
/// Directories covered with an empty one where they exist: homes and engines' state.
const HIDDEN_DIRS: [&str; 9] = [
    "/root",
    "/home",
    "/var/lib/docker",
    "/var/lib/containerd",
    "/run/docker",
    "/run/containerd",
    "/run/netns",
    "/run/user",
    "/etc/ssh",
];
/// The directories whose entries are bound one by one instead of whole. Binding `/` whole
/// copies every mount under it, and bwrap fails the round (`Unable to apply mount flags:
/// remount ...: Invalid argument`) when one of them is unmounted while it copies: a Docker
/// container's overlay under `/var/lib/docker` or its network namespace under `/run/docker`
/// ending beside the round. CI saw it; so the root leaves those places out.
const SPLIT_DIRS: [&str; 4] = ["/", "/run", "/var", "/var/lib"];
/// Entries of [`SPLIT_DIRS`] not bound at all: made fresh (`/dev`, `/proc`, `/tmp`), hidden
/// (the homes, engines' state where mounts come and go), or covered (the Docker socket).
const LEFT_OUT: [&str; 12] = [
    "/dev",
    "/proc",
    "/tmp",
    "/root",
    "/home",
    "/var/lib/docker",
    "/var/lib/containerd",
    "/run/docker",
    "/run/containerd",
    "/run/netns",
    "/run/user",
    "/run/docker.sock",
];

/// What a bwrap round sees.
#[derive(Debug, Clone, Default)]
pub struct BwrapSpec {
    /// The task's worktree.
    pub worktree: PathBuf,
    /// Whether the agent may change the worktree.
    pub writable: bool,
    /// Paths in the worktree mounted read-only over it.
    pub read_only: Vec<PathBuf>,
    /// Paths in the worktree writable again under a read-only one.
    pub rw: Vec<PathBuf>,
    /// The agent's state for this task (its `HOME`: sessions, settings), read-write.
    pub state: PathBuf,
    /// More directories to hide (the main `.git`, `.ganger`, other worktrees, the user's home).
    pub hide: Vec<PathBuf>,
    /// Directories bound back read-only (the agent's installation under a hidden home); one
    /// that nothing hides is left alone.
    pub expose: Vec<PathBuf>,
    /// More files to hide (the Docker socket of `DOCKER_HOST`).
    pub hide_files: Vec<PathBuf>,
    pub network: Network,
    /// The model gateway's socket, bound in at [`RELAY_SOCKET_IN_SANDBOX`] for a round whose
    /// network is `gateway`.
    pub gateway_socket: Option<PathBuf>,
}

fn push(args: &mut Vec<OsString>, option: &str, paths: &[&Path]) {
    args.push(option.into());
    args.extend(paths.iter().map(|p| p.as_os_str().to_owned()));
}

/// The directories to hide, where they really are, without those inside another one (an
/// empty tmpfs over `/tmp` hides every worktree under it already: with a hundred worktrees, a
/// hundred mounts fewer per round).
fn outermost_dirs(spec: &BwrapSpec) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = HIDDEN_DIRS
        .iter()
        .map(PathBuf::from)
        .chain(spec.hide.iter().cloned())
        .filter_map(|dir| dir.canonicalize().ok())
        .filter(|dir| dir.is_dir())
        .collect();
    dirs.sort();
    dirs.dedup();
    let tmp = Path::new("/tmp");
    let mut outermost: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        // Sorted, so an ancestor comes before what it holds.
        if !dir.starts_with(tmp) && !outermost.iter().any(|kept| dir.starts_with(kept)) {
            outermost.push(dir);
        }
    }
    outermost
}

/// The host's mount points, from `/proc/self/mountinfo` (its fifth field, with the octal
/// escapes of spaces and tabs undone).
fn mount_points() -> Vec<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|field| PathBuf::from(field.replace("\\040", " ").replace("\\011", "\t")))
        .collect()
}

/// Whether `dir` holds a mount below one of its [`LEFT_OUT`] entries: a container's overlay
/// under `/var/lib/docker`, a network namespace under `/run/docker`. A mount at the entry
/// itself (Docker's data directory on a disk of its own) stays while the engine runs, and
/// comes along with its directory bound whole.
fn must_enter(dir: &Path, mounts: &[PathBuf]) -> bool {
    LEFT_OUT
        .iter()
        .map(Path::new)
        .filter(|left| left.starts_with(dir) && *left != dir)
        .any(|left| {
            mounts
                .iter()
                .any(|mount| mount.starts_with(left) && mount != left)
        })
}

/// The host's root, read-only, without what [`LEFT_OUT`] names: a [`SPLIT_DIRS`] directory
/// with a mount below one of its left-out entries is entered and its other entries are
/// bound whole (or made the same symbolic link); one without is bound whole, which is
/// cheaper (each bind costs bwrap a quarter of a millisecond or more, growing with the mounts
/// it has made: entering `/var` and `/var/lib` costs about 10 ms). An entry gone by the time
/// bwrap binds it is skipped (`--ro-bind-try`). The root bwrap assembles them in is made
/// read-only once everything is mounted.
fn root_binds(args: &mut Vec<OsString>) {
    let mounts = mount_points();
    let must_enter = |dir: &Path| must_enter(dir, &mounts);
    fn bind_entries(dir: &Path, args: &mut Vec<OsString>, enter: &dyn Fn(&Path) -> bool) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            if LEFT_OUT.iter().any(|left| path == Path::new(left)) {
                continue;
            }
            let is_link = path
                .symlink_metadata()
                .is_ok_and(|m| m.file_type().is_symlink());
            if is_link {
                if let Ok(target) = std::fs::read_link(&path) {
                    push(args, "--symlink", &[&target, &path]);
                }
            } else if SPLIT_DIRS.iter().any(|split| path == Path::new(split)) && enter(&path) {
                bind_entries(&path, args, enter);
            } else {
                push(args, "--ro-bind-try", &[&path, &path]);
            }
        }
    }
    bind_entries(Path::new("/"), args, &must_enter);
}

/// bwrap's arguments up to and including `--`. Later mounts go over earlier ones, so hiding
/// comes first and what is bound back comes after.
pub fn bwrap_args(spec: &BwrapSpec) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    root_binds(&mut args);
    push(&mut args, "--dev", &[Path::new("/dev")]);
    push(&mut args, "--proc", &[Path::new("/proc")]);
    push(&mut args, "--tmpfs", &[Path::new("/tmp")]);
    for dir in outermost_dirs(spec) {
        push(&mut args, "--tmpfs", &[&dir]);
    }
    // Where the files really are: bwrap does not follow a symbolic link (/var/run) to mount
    // over its target, and two names of one file need one mount.
    let mut files: Vec<PathBuf> = SECRET_FILES
        .iter()
        .map(PathBuf::from)
        .chain(spec.hide_files.iter().cloned())
        .filter_map(|f| f.canonicalize().ok())
        .filter(|f| !f.is_dir())
        .collect();
    files.sort();
    files.dedup();
    for file in &files {
        push(&mut args, "--ro-bind", &[Path::new("/dev/null"), file]);
    }
    let hidden_roots: Vec<PathBuf> = HIDDEN_DIRS
        .iter()
        .map(PathBuf::from)
        .chain(spec.hide.iter().cloned())
        .chain(std::iter::once(PathBuf::from("/tmp")))
        .collect();
    let under_hidden = |dir: &PathBuf| hidden_roots.iter().any(|root| dir.starts_with(root));
    for dir in spec
        .expose
        .iter()
        .filter(|dir| dir.exists() && under_hidden(dir))
    {
        push(&mut args, "--ro-bind", &[dir, dir]);
    }
    let worktree_mode = if spec.writable { "--bind" } else { "--ro-bind" };
    push(&mut args, worktree_mode, &[&spec.worktree, &spec.worktree]);
    for path in spec.read_only.iter().filter(|p| p.exists()) {
        push(&mut args, "--ro-bind", &[path, path]);
    }
    if spec.writable {
        for path in spec.rw.iter().filter(|p| p.exists()) {
            push(&mut args, "--bind", &[path, path]);
        }
    }
    push(&mut args, "--bind", &[&spec.state, &spec.state]);
    if let (Network::Gateway, Some(socket)) = (spec.network, &spec.gateway_socket) {
        push(
            &mut args,
            "--bind",
            &[socket, Path::new(RELAY_SOCKET_IN_SANDBOX)],
        );
    }
    push(&mut args, "--remount-ro", &[Path::new("/")]);
    args.extend(
        ["--die-with-parent", "--unshare-all"]
            .iter()
            .map(OsString::from),
    );
    if spec.network == Network::Shared {
        args.push("--share-net".into());
    }
    push(&mut args, "--chdir", &[&spec.worktree]);
    args.push("--".into());
    args
}

/// `command` run inside bwrap (the program `bwrap`, found on the command's `PATH`).
pub fn wrap_in_bwrap(command: AgentCommand, spec: &BwrapSpec, bwrap: &Path) -> AgentCommand {
    let mut args = bwrap_args(spec);
    args.push(command.program.into_os_string());
    args.extend(command.args);
    AgentCommand {
        program: bwrap.to_path_buf(),
        args,
        ..command
    }
}

/// What to bind back so that `program` can run when it lives under a hidden directory: the
/// directory above its `node_modules` (an npm installation), else its own directory; for the
/// path as given and for where its symbolic links lead. A directory the sandbox hides whole
/// and makes anew ([`too_broad`]: `/tmp`, a home) is never bound back whole: the program
/// file alone is (or its `node_modules`).
pub fn installation_dirs(program: &Path) -> Vec<PathBuf> {
    let of = |path: &Path| -> Option<PathBuf> {
        let modules = path
            .ancestors()
            .find(|dir| dir.file_name().is_some_and(|name| name == "node_modules"));
        if let Some(modules) = modules {
            return match modules.parent() {
                Some(root) if !too_broad(root) => Some(root.to_path_buf()),
                _ => Some(modules.to_path_buf()),
            };
        }
        match path.parent() {
            Some(dir) if !too_broad(dir) => Some(dir.to_path_buf()),
            _ => Some(path.to_path_buf()),
        }
    };
    let mut dirs: Vec<PathBuf> = of(program).into_iter().collect();
    if let Ok(real) = program.canonicalize()
        && let Some(dir) = of(&real)
        && !dirs.contains(&dir)
    {
        dirs.push(dir);
    }
    dirs
}

/// Whether `dir` is too broad to bind back whole for a program that lives directly in it:
/// the root, `/tmp` and `/var/tmp`, `/home`, `/root` or this user's home. The sandbox gives
/// the agent a fresh `/tmp` and empty homes; binding one back would show the agent all of it
/// (other tasks' worktrees, other rounds' sockets) and make its own `/tmp` read-only.
fn too_broad(dir: &Path) -> bool {
    ["/", "/tmp", "/var/tmp", "/home", "/root"]
        .iter()
        .any(|broad| dir == Path::new(broad))
        || std::env::var_os("HOME").is_some_and(|home| dir == Path::new(&home))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(args: &[OsString]) -> String {
        args.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn hides_before_binding_back_and_shares_the_network_only_when_asked() {
        // Not under /tmp, which is hidden whole.
        let dir = tempfile::tempdir_in("/var/tmp").unwrap_or_else(|e| panic!("{e}"));
        let wt = dir.path().join("wt");
        let st = dir.path().join("st");
        let git = dir.path().join("main/.git");
        for d in [&wt, &st, &git] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        let spec = BwrapSpec {
            worktree: wt.clone(),
            writable: true,
            state: st.clone(),
            hide: vec![git.clone()],
            ..Default::default()
        };
        let shared = text(&bwrap_args(&spec));
        let hide = shared.find(&format!("--tmpfs {}", git.display()));
        let bind = shared.find(&format!("--bind {} {}", wt.display(), wt.display()));
        assert!(hide.is_some() && bind.is_some() && hide < bind, "{shared}");
        assert!(shared.contains("--share-net"), "{shared}");
        assert!(shared.ends_with(&format!("--chdir {} --", wt.display())));
        let closed = text(&bwrap_args(&BwrapSpec {
            network: Network::None,
            writable: false,
            ..spec
        }));
        assert!(!closed.contains("--share-net"), "{closed}");
        assert!(closed.contains(&format!("--ro-bind {} {}", wt.display(), wt.display())));
        let socket = dir.path().join("gateway.sock");
        let sealed = text(&bwrap_args(&BwrapSpec {
            network: Network::Gateway,
            gateway_socket: Some(socket.clone()),
            ..closed_spec(&wt, &st)
        }));
        assert!(!sealed.contains("--share-net"), "{sealed}");
        let tmp = sealed.find("--tmpfs /tmp ").unwrap();
        let door = sealed
            .find(&format!(
                "--bind {} {RELAY_SOCKET_IN_SANDBOX}",
                socket.display()
            ))
            .unwrap_or_else(|| panic!("{sealed}"));
        assert!(
            tmp < door,
            "the socket goes on the sandbox's own /tmp: {sealed}"
        );
    }

    fn closed_spec(wt: &Path, st: &Path) -> BwrapSpec {
        BwrapSpec {
            worktree: wt.to_path_buf(),
            state: st.to_path_buf(),
            ..Default::default()
        }
    }

    #[test]
    fn the_root_leaves_out_where_engines_mount_and_is_read_only_once_assembled() {
        let args = text(&bwrap_args(&BwrapSpec::default()));
        assert!(args.contains("--ro-bind-try /usr /usr"), "{args}");
        assert!(args.contains("--ro-bind-try /etc /etc"), "{args}");
        for left_out in ["/var/lib/docker", "/run/docker", "/proc", "/tmp"] {
            assert!(
                !args.contains(&format!("--ro-bind-try {left_out} ")),
                "{left_out} bound: {args}"
            );
        }
        assert!(!args.contains("--ro-bind / /"), "{args}");
        if Path::new("/bin").is_symlink() {
            assert!(args.contains("--symlink usr/bin /bin"), "{args}");
        }
        let remount = args.find("--remount-ro /").unwrap_or(usize::MAX);
        let last_bind = args.rfind("--bind ").unwrap_or(usize::MAX);
        assert!(
            remount > last_bind && remount < args.find("--die-with-parent").unwrap_or(0),
            "{args}"
        );
    }

    #[test]
    fn a_directory_is_entered_only_for_a_mount_it_must_leave_out() {
        let mounts: Vec<PathBuf> = [
            "/",
            "/proc",
            "/var/lib/docker/overlay2/x/merged",
            "/mnt/data",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert!(must_enter(Path::new("/var"), &mounts));
        assert!(must_enter(Path::new("/var/lib"), &mounts));
        assert!(!must_enter(Path::new("/run"), &mounts));
        let netns: Vec<PathBuf> = vec![PathBuf::from("/run/docker/netns/default")];
        assert!(must_enter(Path::new("/run"), &netns));
        assert!(!must_enter(Path::new("/var"), &netns));
    }

    #[test]
    fn nested_and_repeated_hidden_dirs_are_mounted_once() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap_or_else(|e| panic!("{e}"));
        let outer = dir.path().join("outer");
        let inner = outer.join("inner");
        std::fs::create_dir_all(&inner).unwrap_or_else(|e| panic!("{e}"));
        let spec = BwrapSpec {
            hide: vec![
                inner.clone(),
                outer.clone(),
                outer.clone(),
                PathBuf::from("/tmp"),
            ],
            ..Default::default()
        };
        let dirs = outermost_dirs(&spec);
        assert_eq!(dirs.iter().filter(|d| **d == outer).count(), 1, "{dirs:?}");
        assert!(!dirs.contains(&inner), "{dirs:?}");
        assert!(!dirs.iter().any(|d| d.starts_with("/tmp")), "{dirs:?}");
    }

    #[test]
    fn an_npm_installation_is_bound_back_whole() {
        let dirs = installation_dirs(Path::new(
            "/root/.cache/ganger/agents/qwen-0.15.10/node_modules/.bin/qwen",
        ));
        assert_eq!(
            dirs.first().map(PathBuf::as_path),
            Some(Path::new("/root/.cache/ganger/agents/qwen-0.15.10"))
        );
        assert_eq!(
            installation_dirs(Path::new("/opt/tools/agent")).first(),
            Some(&PathBuf::from("/opt/tools"))
        );
    }

    #[test]
    fn a_program_straight_in_tmp_or_a_home_is_bound_back_alone() {
        for program in ["/tmp/ganger", "/root/ganger", "/var/tmp/ganger"] {
            assert_eq!(
                installation_dirs(Path::new(program)).first(),
                Some(&PathBuf::from(program))
            );
        }
        assert_eq!(
            installation_dirs(Path::new("/tmp/node_modules/.bin/agent")).first(),
            Some(&PathBuf::from("/tmp/node_modules"))
        );
        // The sandbox's own /tmp stays its own: only the file is bound over it.
        let file = tempfile::Builder::new()
            .prefix("ganger-")
            .tempfile_in("/tmp")
            .unwrap_or_else(|e| panic!("{e}"));
        let program = file.path();
        let spec = BwrapSpec {
            worktree: PathBuf::from("/var/tmp"),
            expose: installation_dirs(program),
            ..Default::default()
        };
        let args = text(&bwrap_args(&spec));
        let bound = format!("--ro-bind {} {}", program.display(), program.display());
        assert!(args.contains(&bound), "{args}");
        assert!(!args.contains("--ro-bind /tmp /tmp"), "{args}");
    }
}

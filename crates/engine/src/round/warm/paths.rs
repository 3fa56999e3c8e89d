//! Where a task's warm host keeps its things, and the markers of a warm agent's processes.

use crate::base::error::{EngineError, Result};
use crate::env::workspace::Workspace;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

/// The start of the marker (`GANGER_ROUND`) of the processes of this workspace's warm agents:
/// a marker is `warm-WORKSPACE.SLUG.TOKEN`, WORKSPACE a digest of the state directory, so that
/// a look for orphans of one repository never takes another's agents (slugs repeat across
/// repositories).
pub(crate) fn token_prefix(ws: &Workspace) -> String {
    format!("warm-{}.", digest(&ws.state.root().display().to_string()))
}

/// The marker of a new warm agent of `slug`.
pub(crate) fn new_marker(ws: &Workspace, slug: &str) -> String {
    format!(
        "{}{slug}.{}",
        token_prefix(ws),
        crate::base::tokens::new_token()
    )
}

/// The task a marker of this workspace names.
pub(crate) fn slug_of_marker<'a>(ws: &Workspace, marker: &'a str) -> Option<&'a str> {
    slug_after(&token_prefix(ws), marker)
}

/// The slug of `marker` after `prefix`: up to the token's dot, the last one (a pipeline
/// role's slug, `TASK.ROLE`, has one of its own; a token has none).
fn slug_after<'a>(prefix: &str, marker: &'a str) -> Option<&'a str> {
    let rest = marker.strip_prefix(prefix)?;
    rest.rsplit_once('.').map(|(slug, _)| slug)
}

fn digest(text: &str) -> String {
    use sha1::{Digest, Sha1};
    Sha1::digest(text.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The store claim a task's warm host holds for its whole life. A warm host is this
/// machine's (its socket, its agent, the agent's session files), so on a store other hosts
/// share the name is also this machine's and this state directory's: a task that moved to
/// another host gets a warm agent there, while the one it left behind idles out, instead of
/// the new host waiting on a claim it can never take.
pub(crate) fn claim_name(ws: &Workspace, slug: &str) -> String {
    if ws.store == crate::env::store_location::StoreLocation::Local {
        return format!("warm-{slug}");
    }
    let place = format!(
        "{}:{}",
        crate::env::machine::host_name(),
        ws.state.root().display()
    );
    format!("warm-{slug}@{}", digest(&place))
}

/// What a warm host says of itself, in its task's directory.
pub(crate) fn info_path(ws: &Workspace, slug: &str) -> PathBuf {
    ws.state.task_dir(slug).join("warm.json")
}

/// The warm host's own log (and its agent's stderr).
pub(crate) fn log_path(ws: &Workspace, slug: &str) -> PathBuf {
    log_path_in(&ws.state, slug)
}

/// How the warm host of `slug` begins the lines it writes of itself in its log
/// (`super::stop`).
pub(crate) fn log_prefix(slug: &str) -> String {
    format!("ganger: the warm host of {slug}")
}

/// [`log_path`] in the state directory `state`.
pub(crate) fn log_path_in(state: &ganger_store::StateDir, slug: &str) -> PathBuf {
    state.task_dir(slug).join("warm.log")
}

/// The warm host's socket: in the state directory's run directory when the path fits a
/// socket address (108 bytes), else in a private directory under the system's temporary one,
/// else (a temporary directory whose own path is long) under `/tmp`.
pub(crate) fn socket_path(ws: &Workspace, slug: &str) -> PathBuf {
    let name = digest(&format!("{}\0{slug}", ws.state.root().display()));
    socket_named(ws, &format!("w-{name}.sock"))
}

/// The socket of `ganger serve`'s keeper of warm hosts, placed as a warm host's is.
pub(crate) fn keeper_socket_path(ws: &Workspace) -> PathBuf {
    let name = digest(&format!("{}\0keeper", ws.state.root().display()));
    socket_named(ws, &format!("k-{name}.sock"))
}

/// The longest socket path used: a socket address holds 108 bytes, its last a NUL.
const SOCKET_PATH_MAX: usize = 100;

fn socket_named(ws: &Workspace, name: &str) -> PathBuf {
    let uid = rustix::process::getuid().as_raw();
    let private = format!("ganger-{uid}");
    socket_in(
        [
            ws.state.run_dir(),
            std::env::temp_dir().join(&private),
            Path::new("/tmp").join(&private),
        ],
        name,
    )
}

/// `name` in the first of `dirs` where its path fits a socket address; the last otherwise.
fn socket_in(dirs: [PathBuf; 3], name: &str) -> PathBuf {
    let [near, temp, short] = dirs;
    [near, temp]
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|path| path.as_os_str().len() < SOCKET_PATH_MAX)
        .unwrap_or_else(|| short.join(name))
}

/// Binds a warm host's or the keeper's socket in a private directory, replacing a stale one
/// (the caller's claim, or serve's lock, says that no other listener is alive).
pub(crate) fn bind(socket: &Path) -> Result<UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = socket.parent() {
        std::fs::create_dir_all(dir).map_err(|e| EngineError::io("create", dir, e))?;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    let _ = std::fs::remove_file(socket);
    UnixListener::bind(socket).map_err(|e| EngineError::io("listen on", socket, e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_marker_names_its_whole_slug_dots_and_all() {
        let token = crate::base::tokens::new_token();
        assert!(!token.contains('.'), "{token}");
        let marker = |slug: &str| format!("warm-0123abcd.{slug}.{token}");
        assert_eq!(
            super::slug_after("warm-0123abcd.", &marker("t1")),
            Some("t1")
        );
        assert_eq!(
            super::slug_after("warm-0123abcd.", &marker("plan.critic")),
            Some("plan.critic")
        );
        assert_eq!(super::slug_after("warm-ffffffff.", &marker("t1")), None);
    }

    #[test]
    fn a_socket_goes_where_its_path_fits_a_socket_address() {
        use std::path::{Path, PathBuf};
        let name = "k-0123456789abcdef.sock";
        let long = |n: usize| PathBuf::from(format!("/{}", "d".repeat(n)));
        let dirs = |near: PathBuf, temp: PathBuf| [near, temp, PathBuf::from("/tmp/ganger-0")];
        assert_eq!(
            super::socket_in(dirs("/r/.ganger/run".into(), "/tmp/ganger-0".into()), name),
            Path::new("/r/.ganger/run").join(name)
        );
        // A state directory deep down: the temporary directory's.
        assert_eq!(
            super::socket_in(dirs(long(90), "/var/tmp/ganger-0".into()), name),
            Path::new("/var/tmp/ganger-0").join(name)
        );
        // A temporary directory deep down too (TMPDIR on a long path): /tmp's.
        let path = super::socket_in(dirs(long(90), long(90)), name);
        assert_eq!(path, Path::new("/tmp/ganger-0").join(name));
        assert!(path.as_os_str().len() < super::SOCKET_PATH_MAX);
    }
}

//! A private PostgreSQL cluster for a test that restarts its server (restarting the shared
//! test server would cut every other test's connections): `scripts/postgres-cluster` in a
//! temporary directory on a free port, which needs PostgreSQL's binaries and root or the
//! `postgres` user, as `.ci/run` has. Without `GANGER_TEST_POSTGRES` (the sign that the
//! machine is set up for PostgreSQL tests) a test says so and passes, except under `CI=true`,
//! where it fails. Stopped when dropped. Uses only std, `tempfile` and `postgres`, so that the
//! store's own tests can include it by path (hence `allow`, not `expect`, for running
//! commands: the store's tests disallow it, test-support does not).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A private cluster with one database of the test's role.
#[derive(Debug)]
pub struct PrivateCluster {
    dir: tempfile::TempDir,
    /// The database's URL.
    pub url: String,
}

impl PrivateCluster {
    /// Makes and starts the cluster with database `database`; `None` (with a note) on a
    /// machine not set up for PostgreSQL tests, outside CI.
    #[allow(
        clippy::disallowed_methods,
        reason = "the cluster is made by the project's own script, as .ci/run makes the shared one"
    )]
    pub fn start(database: &str) -> Option<PrivateCluster> {
        if std::env::var_os("GANGER_TEST_POSTGRES").is_none() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "GANGER_TEST_POSTGRES is not set: CI runs the PostgreSQL tests (.ci/run)"
            );
            #[expect(clippy::print_stderr, reason = "a skipped test says why")]
            {
                eprintln!("note: GANGER_TEST_POSTGRES is not set; skipping this PostgreSQL test");
            }
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("ganger-pg-private-")
            .tempdir()
            .unwrap_or_else(|e| panic!("a temporary directory: {e}"));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap_or_else(|e| panic!("a free port: {e}"))
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/postgres-cluster");
        let made = Command::new("bash")
            .arg(&script)
            .arg(dir.path())
            .arg(port.to_string())
            .output()
            .unwrap_or_else(|e| panic!("scripts/postgres-cluster: {e}"));
        assert!(
            made.status.success(),
            "scripts/postgres-cluster failed: {}",
            String::from_utf8_lossy(&made.stderr)
        );
        let admin = String::from_utf8_lossy(&made.stdout).trim().to_owned();
        // A database of the test's role (the `postgres` database's schema is not its own).
        postgres::Client::connect(&admin, postgres::NoTls)
            .and_then(|mut client| client.batch_execute(&format!("CREATE DATABASE {database}")))
            .unwrap_or_else(|e| panic!("creating database {database}: {e}"));
        let (server, _) = admin
            .rsplit_once('/')
            .unwrap_or_else(|| panic!("the cluster's URL names no database"));
        let url = format!("{server}/{database}");
        Some(PrivateCluster { dir, url })
    }

    /// `pg_ctl ARGS` on the cluster, as its OS user.
    #[allow(
        clippy::disallowed_methods,
        reason = "the server is stopped and started as its administrator does"
    )]
    pub fn pg_ctl(&self, args: &[&str]) {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .unwrap_or_else(|e| panic!("/usr/lib/postgresql: {e}"))
            .flatten()
            .map(|entry| entry.path().join("bin"))
            .max()
            .unwrap_or_else(|| panic!("no PostgreSQL under /usr/lib/postgresql"));
        let data: PathBuf = self.dir.path().join("data");
        let status = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .args(args)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap_or_else(|e| panic!("pg_ctl: {e}"));
        assert!(status.success(), "pg_ctl {args:?} failed");
    }

    /// Has the server listen on `addresses` too (beside 127.0.0.1) and take password logins
    /// from `network` (CIDR), then restarts it: for hosts in network namespaces.
    #[allow(
        dead_code,
        reason = "the store's tests include this file by path and use no namespaces"
    )]
    pub fn listen_also(&self, addresses: &[&str], network: &str) {
        let data = self.dir.path().join("data");
        let append = |file: &str, text: String| {
            use std::io::Write;
            let path = data.join(file);
            std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        };
        append(
            "postgresql.conf",
            format!("\nlisten_addresses = '127.0.0.1,{}'\n", addresses.join(",")),
        );
        append(
            "pg_hba.conf",
            format!("\nhost all all {network} scram-sha-256\n"),
        );
        self.restart();
    }

    /// A fast shutdown, then a start, as an administrator restarts the server.
    pub fn restart(&self) {
        self.pg_ctl(&["restart", "-m", "fast", "-w"]);
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        self.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    }
}
